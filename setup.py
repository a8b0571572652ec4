"""The compiled parts: parsers/broker_logs/_routine.c, the routine-line accounting of broker logs, and
parsers/broker_logs/_dumps.c, a controller's assignment dumps read into columns.

``optional``: where no C compiler is at hand the install still succeeds and the parser runs its
pure-Python path (the same results, slower).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("parsers.broker_logs._routine", ["parsers/broker_logs/_routine.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("parsers.broker_logs._dumps", ["parsers/broker_logs/_dumps.c"],
                             extra_compile_args=["-O2"], optional=True)])
