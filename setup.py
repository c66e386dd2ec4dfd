"""Packaging for budget_extras, the Python companion of lightgbm-cegb.

The fork itself (the `lightgbm` package, lib_lightgbm and the CLI) is built by
`lightgbm-cegb/scripts/build.sh`; see README.md.
"""

from setuptools import find_packages, setup

setup(
    name="budget-extras",
    version="0.1.0",
    description="Prediction-cost tools for any LightGBM model: cost accounting, BudgetPrune, QWYC, Adapt-GBRT, CSTC",
    license="MIT",
    python_requires=">=3.10",
    packages=find_packages(include=["budget_extras", "budget_extras.*"]),
    package_data={"budget_extras": ["py.typed", "datasets/data/*", "datasets/data/**/*"]},
    install_requires=[
        "numba>=0.60",
        "numpy>=1.24",
        "scipy>=1.11",
        "pandas>=1.5",
        "scikit-learn>=1.2",
        "tqdm>=4.60",
        "lightgbm>=4.0",
    ],
    extras_require={"plot": ["matplotlib>=3.6"], "test": ["pytest", "hypothesis"], "bench": ["catboost", "xgboost"]},
    entry_points={"console_scripts": ["budget-extras=budget_extras.cli:main"]},
)
