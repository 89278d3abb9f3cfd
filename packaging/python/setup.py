"""A platform wheel: the package holds a shared library and an executable for one platform, so
the wheel is tagged for it (CUDASHIM_PLAT: the manylinux tag the Makefile computed from the
binaries' glibc symbol versions), not py3-none-any."""
import os

from setuptools import setup
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # newer setuptools carries its own
    from setuptools.command.bdist_wheel import bdist_wheel


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False
        self.plat_name = os.environ.get("CUDASHIM_PLAT", self.plat_name)
        self.plat_name_supplied = True

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(distclass=BinaryDistribution, cmdclass={"bdist_wheel": PlatformWheel})
