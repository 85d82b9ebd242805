//===- Npy.cpp - A small .npy reader and writer ---------------------------===//

#include "numerics/Npy.h"

#include "core/InputFile.h"
#include "numerics/Formats.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8::numerics {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

int64_t itemSize(const std::string &descr) {
  if (descr.size() < 3)
    return 0;
  if (descr[1] == 'V' || descr[1] == 'f' || descr[1] == 'i' ||
      descr[1] == 'u') {
    int64_t n = std::atoll(descr.c_str() + 2);
    return n > 0 && n <= 8 ? n : 0;
  }
  return 0;
}

/// The three entries of a .npy header's dictionary, as their text: the
/// descr without its quotes, fortran_order's word, the shape's tuple with
/// its parentheses.
struct HeaderDict {
  std::string descr, fortranOrder, shape;
};

/// The header's dictionary as the format writes it, a Python literal such
/// as {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } followed
/// by spaces and a newline: each of the three keys once, nothing else.
Expected<HeaderDict> parseDict(const std::string &header) {
  static const char *const kKeys[3] = {"descr", "fortran_order", "shape"};
  auto bad = [&](const std::string &what) {
    return errorf("expected ", what, " in the .npy header, found '", header,
                  "'");
  };
  size_t i = 0;
  auto skip = [&] {
    while (i < header.size() &&
           (header[i] == ' ' || header[i] == '\t' || header[i] == '\n'))
      ++i;
  };
  skip();
  if (i == header.size() || header[i] != '{')
    return bad("a dictionary ({'descr': ..., 'fortran_order': ..., "
               "'shape': (...)})");
  ++i;
  HeaderDict d;
  bool seen[3] = {false, false, false};
  for (;;) {
    skip();
    if (i < header.size() && header[i] == '}') {
      ++i;
      break;
    }
    // A quoted key.
    if (i == header.size() || (header[i] != '\'' && header[i] != '"'))
      return bad("a quoted key or '}'");
    const char quote = header[i];
    const size_t end = header.find(quote, i + 1);
    if (end == std::string::npos)
      return bad("a closing quote");
    const std::string key = header.substr(i + 1, end - i - 1);
    int which = 0;
    while (which < 3 && key != kKeys[which])
      ++which;
    if (which == 3)
      return bad("only the keys 'descr', 'fortran_order' and 'shape' (not '" +
                 key + "')");
    if (seen[which])
      return bad("the key '" + key + "' once");
    seen[which] = true;
    i = end + 1;
    skip();
    if (i == header.size() || header[i] != ':')
      return bad("':' after '" + key + "'");
    ++i;
    skip();
    if (which == 0) {
      if (i == header.size() || (header[i] != '\'' && header[i] != '"'))
        return bad("a quoted 'descr' string");
      const size_t close = header.find(header[i], i + 1);
      if (close == std::string::npos)
        return bad("a closing quote");
      d.descr = header.substr(i + 1, close - i - 1);
      i = close + 1;
    } else if (which == 1) {
      const size_t start = i;
      while (i < header.size() && std::isalpha((unsigned char)header[i]))
        ++i;
      d.fortranOrder = header.substr(start, i - start);
      if (d.fortranOrder != "False" && d.fortranOrder != "True")
        return bad("fortran_order False or True");
    } else {
      const size_t close = header.find(')', i);
      if (i == header.size() || header[i] != '(' || close == std::string::npos)
        return bad("a 'shape' tuple");
      d.shape = header.substr(i, close - i + 1);
      i = close + 1;
    }
    skip();
    if (i < header.size() && header[i] == ',') {
      ++i;
      continue;
    }
    if (i < header.size() && header[i] == '}') {
      ++i;
      break;
    }
    return bad("',' or '}' after the value of '" + key + "'");
  }
  skip();
  if (i != header.size())
    return bad("nothing but spaces after the dictionary");
  for (int k = 0; k < 3; ++k)
    if (!seen[k])
      return bad(std::string("the key '") + kKeys[k] + "'");
  return d;
}

template <typename T> T readLE(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T)); // x86-64 and aarch64 are little-endian
  return v;
}

NpyArray make(const std::string &descr, const void *data, size_t bytes,
              std::vector<int64_t> shape) {
  NpyArray a;
  a.descr = descr;
  a.shape = std::move(shape);
  a.data.resize(bytes);
  if (bytes)
    std::memcpy(a.data.data(), data, bytes);
  return a;
}

/// The element count, saturating at INT64_MAX (parseNpy refuses shapes
/// whose count overflows; arrays built in memory come from valid tensors).
int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

} // namespace

int64_t NpyArray::elements() const { return product(shape); }

namespace {
/// What a .npy header says: the element type, the shape, and where the
/// data starts and how many bytes of it the shape needs.
struct NpyHeader {
  std::string descr;
  std::vector<int64_t> shape;
  size_t dataOffset = 0;
  uint64_t dataBytes = 0;
};

/// Parses the header at the start of `prefix` (the first bytes of a file of
/// `fileSize` bytes): the element type, the shape (each dimension an
/// integer, the element count below 2^63) and the data it needs, which must
/// be in the file.
Expected<NpyHeader> parseHeader(const uint8_t *prefix, size_t prefixSize,
                                uint64_t fileSize) {
  if (prefixSize < 10 || std::memcmp(prefix, kMagic, kMagicLen) != 0)
    return errorf("expected a .npy file (magic \\x93NUMPY), found ",
                  prefixSize < 10 ? "a file shorter than a header"
                                  : "other bytes");
  int major = prefix[6];
  size_t headerLen = 0, offset = 0;
  if (major == 1) {
    headerLen = readLE<uint16_t>(&prefix[8]);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (prefixSize < 12)
      return errorf("expected a .npy version ", major,
                    " header, found a truncated file");
    headerLen = readLE<uint32_t>(&prefix[8]);
    offset = 12;
  } else {
    return errorf("expected .npy format version 1, 2 or 3, found ", major);
  }
  if (headerLen > kMaxNpyHeader)
    return errorf("expected a .npy header of at most ", kMaxNpyHeader,
                  " bytes, found one of ", headerLen);
  if (offset + headerLen > prefixSize)
    return errorf("expected a header of ", headerLen, " bytes, found ",
                  prefixSize - offset);
  std::string header(prefix + offset, prefix + offset + headerLen);
  NpyHeader h;
  h.dataOffset = offset + headerLen;
  Expected<HeaderDict> dict = parseDict(header);
  if (!dict)
    return dict.status();
  h.descr = dict->descr;
  if (itemSize(h.descr) == 0 || (h.descr[0] != '<' && h.descr[0] != '|'))
    return errorf("expected a little-endian f2/f4/f8, i1/i4, u1/u2 or V2 "
                  "element type, found '",
                  h.descr, "'");
  if (dict->fortranOrder == "True")
    return errorf("expected a C-order array (fortran_order False), found "
                  "fortran_order True");
  const std::string &tuple = dict->shape;
  // A Python tuple: () (0-d), (n,), (n, m) or (n, m,): its elements split
  // at every ',', none blank but the one a trailing comma leaves.
  auto blank = [](const std::string &t) {
    return t.find_first_not_of(" \t") == std::string::npos;
  };
  std::vector<std::string> toks;
  const std::string inner = tuple.substr(1, tuple.size() - 2);
  for (size_t start = 0;;) {
    const size_t comma = inner.find(',', start);
    toks.push_back(inner.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (toks.size() == 1 && blank(toks[0])) {
    toks.clear(); // ()
  } else {
    // A trailing comma leaves one blank element; (n), without it, is a
    // number, not a tuple.
    const bool trailing = toks.size() > 1 && blank(toks.back());
    if (trailing)
      toks.pop_back();
    bool bad = !trailing && toks.size() == 1;
    for (const std::string &t : toks)
      bad = bad || blank(t);
    if (bad)
      return errorf("expected a shape tuple such as (2,) or (2, 3), found '",
                    tuple, "'");
  }
  // The element count, checked: a shape whose count overflows is refused
  // even when another dimension is 0.
  int64_t nonzero = 1;
  for (const std::string &tok : toks) {
    size_t p = tok.find_first_not_of(" \t");
    size_t q = tok.find_last_not_of(" \t");
    const std::string digits = tok.substr(p, q - p + 1);
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || !std::isdigit((unsigned char)digits[0]) ||
        end != digits.c_str() + digits.size() || errno == ERANGE)
      return errorf("expected non-negative integer dimensions below 2^63, "
                    "found '",
                    tuple, "'");
    if (v != 0 && __builtin_mul_overflow(nonzero, int64_t(v), &nonzero))
      return errorf("expected a shape of fewer than 2^63 elements, found '",
                    tuple, "'");
    h.shape.push_back(v);
  }
  const uint64_t have = fileSize - h.dataOffset;
  // Elements times item size, saturating instead of overflowing.
  constexpr uint64_t kHuge = uint64_t(1) << 62;
  uint64_t need = uint64_t(itemSize(h.descr));
  for (int64_t dim : h.shape)
    need =
        dim != 0 && need > kHuge / uint64_t(dim) ? kHuge : need * uint64_t(dim);
  if (need > have)
    return errorf("expected ",
                  need == kHuge ? std::string("over 2^62")
                                : std::to_string(need),
                  " bytes of data for shape ", tuple, " of '", h.descr,
                  "', found ", have);
  h.dataBytes = need;
  return h;
}

std::string errnoText() { return std::strerror(errno); }

/// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Reads exactly `n` bytes at `offset`.
bool readAt(int fd, uint8_t *out, size_t n, uint64_t offset) {
  while (n) {
    ssize_t r = ::pread(fd, out, n, off_t(offset));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    out += r;
    n -= size_t(r);
    offset += uint64_t(r);
  }
  return true;
}
} // namespace

Expected<NpyArray> parseNpy(const std::vector<uint8_t> &bytes) {
  Expected<NpyHeader> h = parseHeader(bytes.data(), bytes.size(), bytes.size());
  if (!h)
    return h.status();
  NpyArray a;
  a.descr = std::move(h->descr);
  a.shape = std::move(h->shape);
  a.data.assign(bytes.begin() + long(h->dataOffset),
                bytes.begin() + long(h->dataOffset + h->dataBytes));
  return a;
}

Expected<NpyArray> readNpy(const std::string &path) {
  // Symbolic links are followed (a link to an input is legitimate); what
  // they reach must be a regular file.
  auto opened = openInputFile(path, INT64_MAX, "the .npy file");
  if (!opened)
    return opened.status();
  const int fd = opened->fd();
  const uint64_t size = opened->size();
  // The header first: its shape is checked against the file's size before
  // the data is allocated.
  std::vector<uint8_t> prefix(
      size_t(std::min<uint64_t>(size, 12 + kMaxNpyHeader)));
  if (!readAt(fd, prefix.data(), prefix.size(), 0))
    return errorf("cannot read '", path, "': ", errnoText());
  Expected<NpyHeader> h = parseHeader(prefix.data(), prefix.size(), size);
  if (!h)
    return Status(h.status()).withContext("reading '" + path + "'");
  NpyArray a;
  a.descr = std::move(h->descr);
  a.shape = std::move(h->shape);
  a.data.resize(size_t(h->dataBytes));
  if (!readAt(fd, a.data.data(), a.data.size(), h->dataOffset))
    return errorf("cannot read the data of '", path, "': ", errnoText());
  return a;
}

std::vector<uint8_t> serializeNpy(const NpyArray &a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : "") +
             (i + 1 < a.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + a.descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that magic + version + length + header is a multiple of 64.
  size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back(1);
  out.push_back(0);
  uint16_t len = uint16_t(header.size());
  out.push_back(uint8_t(len & 0xFF));
  out.push_back(uint8_t(len >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), a.data.begin(), a.data.end());
  return out;
}

Status writeNpy(const std::string &path, const NpyArray &a) {
  std::vector<uint8_t> bytes = serializeNpy(a);
  // O_NONBLOCK: a FIFO without a reader is refused instead of waited on;
  // anything but a regular file is refused before it is written.
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644)};
  if (f.fd < 0)
    return errorf("cannot open '", path, "' for writing: ", errnoText());
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    return errorf("cannot stat '", path, "': ", errnoText());
  if (!S_ISREG(st.st_mode))
    return errorf("expected '", path,
                  "' to be a regular file or not to exist, found ",
                  fileTypeName(st.st_mode));
  if (::ftruncate(f.fd, 0) != 0)
    return errorf("cannot truncate '", path, "': ", errnoText());
  const uint8_t *p = bytes.data();
  size_t left = bytes.size();
  while (left) {
    ssize_t w = ::write(f.fd, p, left);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return errorf("cannot write '", path, "': ", errnoText());
    p += w;
    left -= size_t(w);
  }
  return Status::ok();
}

Expected<std::vector<float>> npyToFloat(const NpyArray &a, U2As u2) {
  int64_t n = a.elements();
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t *p = a.data.data();
  const std::string &d = a.descr;
  for (int64_t i = 0; i < n; ++i) {
    if (d == "<f4")
      out[size_t(i)] = readLE<float>(p + 4 * i);
    else if (d == "<f8")
      out[size_t(i)] = float(readLE<double>(p + 8 * i));
    else if (d == "<f2")
      out[size_t(i)] = f16ToFloat(readLE<uint16_t>(p + 2 * i));
    else if (d == "<V2" || (d == "<u2" && u2 == U2As::BF16))
      out[size_t(i)] = bf16ToFloat(readLE<uint16_t>(p + 2 * i));
    else if (d == "<u2")
      out[size_t(i)] = float(readLE<uint16_t>(p + 2 * i));
    else if (d == "<i4")
      out[size_t(i)] = float(readLE<int32_t>(p + 4 * i));
    else if (d == "|u1")
      out[size_t(i)] = float(p[i]);
    else if (d == "|i1")
      out[size_t(i)] = float(int8_t(p[i]));
    else
      return errorf("expected an f2, f4, f8, bf16 (V2/u2), i4, u1 or i1 "
                    "array, found '",
                    d, "'");
  }
  if (n == 0 && d != "<f4" && d != "<f8" && d != "<f2" && d != "<V2" &&
      d != "<u2" && d != "<i4" && d != "|u1" && d != "|i1")
    return errorf("expected an f2, f4, f8, bf16 (V2/u2), i4, u1 or i1 "
                  "array, found '",
                  d, "'");
  return out;
}

Expected<std::vector<uint16_t>> npyToBF16(const NpyArray &a) {
  int64_t n = a.elements();
  std::vector<uint16_t> out(static_cast<size_t>(n));
  if (a.descr == "<V2" || a.descr == "<u2") {
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = readLE<uint16_t>(a.data.data() + 2 * i);
    return out;
  }
  if (a.descr == "<f4") {
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = floatToBF16(readLE<float>(a.data.data() + 4 * i));
    return out;
  }
  return errorf("expected a bf16 array ('<V2' or '<u2') or '<f4', found '",
                a.descr, "'");
}

Expected<std::vector<uint8_t>> npyToBytes(const NpyArray &a) {
  if (a.descr != "|u1" && a.descr != "|i1")
    return errorf("expected a byte array ('|u1' or '|i1'), found '", a.descr,
                  "'");
  return a.data;
}

NpyArray npyFromFloat(const float *data, std::vector<int64_t> shape) {
  size_t n = size_t(product(shape));
  return make("<f4", data, n * 4, std::move(shape));
}

NpyArray npyFromDouble(const double *data, std::vector<int64_t> shape) {
  size_t n = size_t(product(shape));
  return make("<f8", data, n * 8, std::move(shape));
}

NpyArray npyFromBF16(const uint16_t *data, std::vector<int64_t> shape) {
  size_t n = size_t(product(shape));
  return make("<u2", data, n * 2, std::move(shape));
}

NpyArray npyFromBytes(const uint8_t *data, std::vector<int64_t> shape) {
  size_t n = size_t(product(shape));
  return make("|u1", data, n, std::move(shape));
}

NpyArray npyFromInt32(const int32_t *data, std::vector<int64_t> shape) {
  size_t n = size_t(product(shape));
  return make("<i4", data, n * 4, std::move(shape));
}

} // namespace fp8::numerics
