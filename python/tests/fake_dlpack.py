"""An array that only describes itself through DLPack: any device, any
pointer. For tests of what the extension checks before it touches memory
(a CUDA array on a machine without a GPU, a device it does not support)."""

import ctypes

_CODES = {"float32": (2, 32), "float16": (2, 16), "bfloat16": (4, 16),
          "uint8": (1, 8), "int32": (0, 32), "float8_e4m3fn": (10, 8)}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeDeviceArray:
    def __init__(self, shape, dtype, device_type, device_id=0,
                 pointer=0x10000):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        code, bits = _CODES[dtype]
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data = pointer
        t.device = _DLDevice(device_type, device_id)
        t.ndim = len(shape)
        t.dtype = _DLDataType(code, bits, 1)
        t.shape = self._shape
        t.strides = None
        self._device = (device_type, device_id)

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, **kwargs):
        if kwargs.get("max_version") is not None:
            raise TypeError("only the unversioned capsule")
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)
