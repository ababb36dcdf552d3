"""The optional compiled part of skyjo_ref.env (everything else is in pyproject.toml).

``optional=True``: without a C compiler (or Python's headers) the install still succeeds and the
environment runs its pure-Python encoder, the reference (docs/learning.md).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "skyjo_ref.env._fastobs",
            sources=["referee/skyjo_ref/env/_fastobs.c"],
            optional=True,
        )
    ]
)
