"""The one compiled part: parsers/broker_logs/_routine.c, the routine-line accounting of broker logs.

``optional``: where no C compiler is at hand the install still succeeds and the parser runs its
pure-Python path (the same results, slower).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("parsers.broker_logs._routine", ["parsers/broker_logs/_routine.c"],
                             extra_compile_args=["-O2"], optional=True)])
