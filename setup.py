"""Build pyhccl: the host runtime (libascendcl.so, libhccl.so) and the Cython extension.

By default the host runtime in csrc/ is built and shipped inside the package
(pyhccl/lib, headers in pyhccl/include). With PYHCCL_CANN=/path/to/ascend-toolkit
the extension is built against a CANN toolkit's headers and libraries instead.
"""
import os
import shutil
import subprocess
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CANN = os.environ.get("PYHCCL_CANN", "")


class BuildWithRuntime(build_ext):
    """Build the host runtime with make, then the extension that links it."""

    def run(self):
        if not CANN:
            pkg = os.path.join(HERE, "pyhccl") if self.inplace else \
                os.path.join(os.path.abspath(self.build_lib), "pyhccl")
            jobs = str(os.cpu_count() or 2)
            subprocess.check_call(["make", "-s", "-j", jobs, "-C", os.path.join(HERE, "csrc"),
                                   "OUT=" + os.path.join(HERE, "build", "lib"),
                                   "OBJ=" + os.path.join(HERE, "build", "obj")])
            lib_dst = os.path.join(pkg, "lib")
            os.makedirs(lib_dst, exist_ok=True)
            for name in ("libascendcl.so", "libhccl.so"):
                shutil.copy2(os.path.join(HERE, "build", "lib", name), lib_dst)
            inc_dst = os.path.join(pkg, "include")
            shutil.rmtree(inc_dst, ignore_errors=True)
            shutil.copytree(os.path.join(HERE, "include"), inc_dst)
            for ext in self.extensions:
                ext.library_dirs.append(lib_dst)
        super().run()


if CANN:
    include_dirs = [os.path.join(CANN, "include")]
    library_dirs = [os.path.join(CANN, "lib64")]
    rpath = [os.path.join(CANN, "lib64")]
    macros = [("PYHCCL_CANN", "1")]
else:
    include_dirs = [os.path.join(HERE, "include")]
    library_dirs = []
    rpath = ["$ORIGIN/lib"]
    macros = []

ext = Extension(
    "pyhccl._core",
    sources=["pyhccl/_core.pyx"],
    include_dirs=include_dirs + [numpy.get_include()],
    library_dirs=library_dirs,
    libraries=["hccl", "ascendcl"],
    runtime_library_dirs=rpath,
    define_macros=macros,
    extra_compile_args=["-O2"],
)

setup(
    ext_modules=cythonize([ext], language_level=3,
                          compile_time_env={"PYHCCL_CANN": bool(CANN)},
                          compiler_directives={"embedsignature": True}),
    cmdclass={"build_ext": BuildWithRuntime},
    package_data={"pyhccl": ["*.pxd", "*.pyi", "py.typed", "src/*.pxi", "lib/*.so", "include/*/*.h",
                           "include/*/*/*.h"]},
    zip_safe=False,
)
