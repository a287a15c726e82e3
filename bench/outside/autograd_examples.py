"""Real research programs nobody here wrote, differentiated as written: autograd's examples.

    python bench/outside/autograd_examples.py [--sdist PATH] [--checks N] [--scipy plain|dualad]

HIPS autograd's source distribution ships ~20 small research programs (Bayesian neural
networks, Gaussian processes, black-box variational inference, GMMs, HMM EM, ICA, an
LSTM, an RNN, neural ODEs, ...), written in NumPy through ``autograd.numpy``. Run through
the shim (bench/outside/autograd_shim/: ``autograd.numpy`` is plain NumPy, the
differentiation API is dualad's), each is a plain-NumPy program. Each runs as its author
wrote it, with ``AG_SHIM_CHECK=N``: the first N gradients the program asks for are each
compared with a Richardson-extrapolated central difference of the program's own
objective along a random direction (its random-number generators restored before each
evaluation), and then the program stops. A program passes when it reaches N checked
gradients with every relative error under 1e-4 (EDITS lists the one
change made to an example's source, with its reason).

Left out: the examples that need a download (MNIST: convnet, neural_net,
variational_autoencoder, generative_adversarial_net) and those that exercise autograd's
own internals (define_gradient, rkhs, dot_graph, print_trace, fixed_points: its
extension API, tracer and VSpace).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from autograd_suite import sdist  # noqa: E402

EXAMPLES = [
    "bayesian_neural_net", "bayesian_optimization", "black_box_svi", "deep_gaussian_process",
    "gaussian_process", "gmm", "gplvm", "hmm_em", "ica", "logistic_regression", "lstm",
    "mixture_variational_inference", "natural_gradient_black_box_svi",
    "negative_binomial_maxlike", "neural_net_regression", "ode_net", "rnn", "rosenbrock",
    "sinusoid", "tanh",
]
TOLERANCE = 1e-4      # relative; the losses of several examples have kinks (relu, |x|)
# Edits made to an example before it runs, each with its reason.
EDITS = {
    "ode_net": [("rtol=0.01", "rtol=1e-10, atol=1e-10",
                 "at the example's solver tolerance (rtol=0.01) finite differences of the "
                 "program measure the adaptive solver's step changes, not the derivative")],
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdist")
    ap.add_argument("--checks", type=int, default=3)
    ap.add_argument("--scipy", choices=("plain", "dualad"), default="plain")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("names", nargs="*", default=EXAMPLES)
    args = ap.parse_args(argv)
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        with tarfile.open(sdist(args.sdist)) as tar:
            tar.extractall(tmp, members=[m for m in tar.getmembers() if "/examples/" in m.name],
                           filter="data")
        examples = next(tmp.glob("autograd-*/examples"))
        print(f"autograd's examples on dualad (autograd.numpy = NumPy, autograd.scipy = "
              f"{'SciPy' if args.scipy == 'plain' else 'SciPy + dualad.scipy'}); "
              f"{args.checks} gradients checked per program")
        for name in args.names:
            log = tmp / f"{name}.jsonl"
            for old, new, why in EDITS.get(name, ()):
                path = examples / f"{name}.py"
                path.write_text(path.read_text().replace(old, new))
                print(f"  (edit in {name}: {old!r} -> {new!r}: {why})")
            env = dict(os.environ, PYTHONPATH=str(HERE / "autograd_shim"), MPLBACKEND="Agg",
                       AG_SHIM_CHECK=str(args.checks), AG_SHIM_LOG=str(log),
                       AG_SHIM_SCIPY=args.scipy)
            try:
                proc = subprocess.run([sys.executable, f"{name}.py"], cwd=examples, env=env,
                                      capture_output=True, text=True, timeout=args.timeout)
                error = proc.stderr.strip().splitlines()[-1][:140] if proc.returncode else ""
            except subprocess.TimeoutExpired:
                error = f"timed out after {args.timeout:.0f} s"
            checks = ([json.loads(line) for line in log.read_text().splitlines()]
                      if log.exists() else [])
            worst = max((c["rel"] for c in checks), default=float("nan"))
            ok = not error and len(checks) >= args.checks and worst < TOLERANCE
            if not error and len(checks) < args.checks:
                error = f"the program ended after {len(checks)} gradients"
            passed += ok
            sizes = sorted({c["n"] for c in checks})
            print(f"  {'ok  ' if ok else 'FAIL'} {name:32s} {len(checks)} checked, n = "
                  f"{','.join(map(str, sizes)) or '-':10s} worst rel. error {worst:.1e}"
                  f"{'  ' + error if error else ''}")
    print(f"{passed} of {len(args.names)} programs differentiate as written")


if __name__ == "__main__":
    main()
