#!/usr/bin/env python3
"""Lists each OpenCL device's name, version and extensions through the ICD loader (ctypes, no
pyopencl): whether a device has cl_khr_fp16 or cl_khr_integer_dot_product, the extensions
optune's OpenCL kernels would take. Usage: opencl_extensions.py"""
import ctypes
import ctypes.util

CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_NAME, CL_DEVICE_VERSION, CL_DEVICE_EXTENSIONS = 0x102B, 0x102F, 0x1030


def info(cl, device, param):
    size = ctypes.c_size_t()
    cl.clGetDeviceInfo(device, param, 0, None, ctypes.byref(size))
    buffer = ctypes.create_string_buffer(size.value)
    cl.clGetDeviceInfo(device, param, size, buffer, None)
    return buffer.value.decode(errors="replace")


def main():
    cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    count = ctypes.c_uint()
    cl.clGetPlatformIDs(0, None, ctypes.byref(count))
    platforms = (ctypes.c_void_p * count.value)()
    cl.clGetPlatformIDs(count, platforms, None)
    for platform in platforms:
        devices_count = ctypes.c_uint()
        if cl.clGetDeviceIDs(ctypes.c_void_p(platform), ctypes.c_ulonglong(CL_DEVICE_TYPE_ALL), 0, None,
                             ctypes.byref(devices_count)) != 0:
            continue
        devices = (ctypes.c_void_p * devices_count.value)()
        cl.clGetDeviceIDs(ctypes.c_void_p(platform), ctypes.c_ulonglong(CL_DEVICE_TYPE_ALL), devices_count, devices, None)
        for device in devices:
            device = ctypes.c_void_p(device)
            extensions = info(cl, device, CL_DEVICE_EXTENSIONS).split()
            print(f"{info(cl, device, CL_DEVICE_NAME)} ({info(cl, device, CL_DEVICE_VERSION)}):")
            for wanted in ("cl_khr_fp16", "cl_khr_integer_dot_product"):
                print(f"  {wanted}: {'yes' if wanted in extensions else 'no'}")
            print("  all:", " ".join(sorted(extensions)))


if __name__ == "__main__":
    main()
