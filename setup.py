"""The compiled parts: parsers/broker_logs/_routine.c, the routine-line accounting of broker logs,
parsers/broker_logs/_dumps.c, a controller's assignment dumps read into columns, and parsers/common/_lines.c, a
payload's CR, control bytes and longest line in one pass, and parsers/common/_demux.c, a block of
``docker compose logs`` lines handed to its services.

``optional``: where no C compiler is at hand the install still succeeds and the parser runs its
pure-Python path (the same results, slower).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("parsers.broker_logs._routine", ["parsers/broker_logs/_routine.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("parsers.broker_logs._dumps", ["parsers/broker_logs/_dumps.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("parsers.common._lines", ["parsers/common/_lines.c"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("parsers.common._demux", ["parsers/common/_demux.c"],
                             extra_compile_args=["-O2"], optional=True)])
