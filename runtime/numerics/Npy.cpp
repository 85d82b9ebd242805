//===- Npy.cpp - A small .npy reader and writer ---------------------------===//

#include "runtime/numerics/Npy.h"

#include "runtime/numerics/Formats.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

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

/// The text after `'key':` in the header dict, trimmed of spaces.
std::string valueOf(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return {};
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return {};
  size_t v = header.find_first_not_of(' ', colon + 1);
  return v == std::string::npos ? std::string() : header.substr(v);
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

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

int64_t NpyArray::elements() const { return product(shape); }

Expected<NpyArray> parseNpy(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return errorf("expected a .npy file (magic \\x93NUMPY), found ",
                  bytes.size() < 10 ? "a file shorter than a header"
                                    : "other bytes");
  int major = bytes[6];
  size_t headerLen = 0, offset = 0;
  if (major == 1) {
    headerLen = readLE<uint16_t>(&bytes[8]);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return errorf("expected a .npy version ", major,
                    " header, found a truncated file");
    headerLen = readLE<uint32_t>(&bytes[8]);
    offset = 12;
  } else {
    return errorf("expected .npy format version 1, 2 or 3, found ", major);
  }
  if (offset + headerLen > bytes.size())
    return errorf("expected a header of ", headerLen, " bytes, found ",
                  bytes.size() - offset);
  std::string header(bytes.begin() + long(offset),
                     bytes.begin() + long(offset + headerLen));
  NpyArray a;
  std::string d = valueOf(header, "descr");
  if (d.size() < 2 || d[0] != '\'')
    return errorf("expected a 'descr' string in the .npy header, found '",
                  header, "'");
  a.descr = d.substr(1, d.find('\'', 1) - 1);
  if (itemSize(a.descr) == 0 || (a.descr[0] != '<' && a.descr[0] != '|'))
    return errorf("expected a little-endian f2/f4/f8, i1/i4, u1/u2 or V2 "
                  "element type, found '",
                  a.descr, "'");
  std::string fortran = valueOf(header, "fortran_order");
  if (fortran.rfind("True", 0) == 0)
    return errorf("expected a C-order array (fortran_order False), found "
                  "fortran_order True");
  std::string shape = valueOf(header, "shape");
  if (shape.empty() || shape[0] != '(')
    return errorf("expected a 'shape' tuple in the .npy header, found '",
                  header, "'");
  size_t close = shape.find(')');
  std::istringstream dims(shape.substr(1, close - 1));
  std::string tok;
  while (std::getline(dims, tok, ',')) {
    size_t p = tok.find_first_not_of(' ');
    if (p == std::string::npos)
      continue;
    char *end = nullptr;
    long long v = std::strtoll(tok.c_str() + p, &end, 10);
    if (end == tok.c_str() + p || v < 0)
      return errorf("expected non-negative integer dimensions, found '",
                    shape.substr(0, close + 1), "'");
    a.shape.push_back(v);
  }
  size_t have = bytes.size() - offset - headerLen;
  // Elements times item size, saturating instead of overflowing for absurd
  // shapes.
  constexpr uint64_t kHuge = uint64_t(1) << 62;
  uint64_t need = uint64_t(itemSize(a.descr));
  for (int64_t dim : a.shape)
    need =
        dim != 0 && need > kHuge / uint64_t(dim) ? kHuge : need * uint64_t(dim);
  if (need > have)
    return errorf("expected ",
                  need == kHuge ? std::string("over 2^62")
                                : std::to_string(need),
                  " bytes of data for shape ", shape.substr(0, close + 1),
                  " of '", a.descr, "', found ", have);
  a.data.assign(bytes.begin() + long(offset + headerLen),
                bytes.begin() + long(offset + headerLen + need));
  return a;
}

Expected<NpyArray> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return errorf("cannot open '", path, "' for reading");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  Expected<NpyArray> a = parseNpy(bytes);
  if (!a)
    return Status(a.status()).withContext("reading '" + path + "'");
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
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return errorf("cannot open '", path, "' for writing");
  out.write(reinterpret_cast<const char *>(bytes.data()),
            std::streamsize(bytes.size()));
  if (!out)
    return errorf("cannot write '", path, "'");
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
