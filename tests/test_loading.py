"""Loading one module of a big package without the package's own initialisation."""

import subprocess
import sys


def test_the_assignment_solver_loads_without_scipy_optimize_and_stays_the_same_function():
    script = (
        "import sys\n"
        "import numpy\n"  # a small matrix is solved in plain Python while numpy is not loaded
        "from nlpbench.metrics.assignment import best_pairs, solver\n"
        "assert best_pairs([1, 2], [1, 2], lambda a, b: float(a == b)) == [(0, 0, 1.0), (1, 1, 1.0)]\n"
        "assert 'scipy.optimize' not in sys.modules and 'scipy.optimize._lsap' in sys.modules\n"
        "import scipy.optimize\n"
        "assert scipy.optimize.linear_sum_assignment is solver()\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_package_already_imported_is_imported_the_usual_way():
    script = (
        "import sys, scipy.optimize\n"
        "from nlpbench.loading import import_alone\n"
        "module = import_alone('scipy.optimize._lsap', ['scipy.optimize'])\n"
        "assert sys.modules['scipy.optimize'] is scipy.optimize and module is scipy.optimize._lsap\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_layout_that_does_not_fit_falls_back_to_the_plain_import():
    script = (
        "import sys\n"
        "from nlpbench.loading import import_alone\n"
        "module = import_alone('json.decoder', ['json.nosuchpackage'])\n"
        "assert module is sys.modules['json.decoder'] and 'json.nosuchpackage' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
