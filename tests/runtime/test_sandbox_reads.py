"""The answer key is out of reach: a sandboxed program reads only its working directory
(the data it was given) and what Python and its libraries need.

Each case is a real program in a real sandbox that tries one way to reach the ground truth
of Sachs or Auto MPG (the package's data files, ``import silicolab``, its source by path),
the run directory, the user's home or ``/etc/passwd``; it must fail and the truth must not
appear in its output. The Python-level cases run twice: with the kernel's Landlock rules
(when this kernel has Landlock) and with the audit hook alone (``SILICOLAB_SANDBOX_LANDLOCK=0``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import silicolab
from silicolab.discovery import datasets
from silicolab.runtime.sandbox import _reads as sandbox_reads
from silicolab.runtime.sandbox import run_python

PACKAGE = Path(silicolab.__file__).resolve().parent
DATA = Path(datasets.__file__).resolve().parent / "data"
SACHS = DATA / "sachs_gt_edges.csv"
AUTO = DATA / "auto_mpg_gt_edges.csv"
#: Lines of the two truths that a leak would print.
SECRETS = ("pkc,raf", "raf,mek", "Weight,Displacement", "Horsepower,Mpg")
LANDLOCK = sandbox_reads.landlock_abi() >= 1

ATTEMPTS = {
    "import silicolab": "import silicolab\nprint(silicolab.__file__)\n",
    "import the datasets": (
        "from silicolab.discovery.datasets import load\nprint(load('sachs').truth.edges)\n"
    ),
    "importlib by path": (
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('d', {str(Path(datasets.__file__))!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(module.load('sachs').truth.edges)\n"
    ),
    "runpy": f"import runpy\nprint(runpy.run_path({str(Path(datasets.__file__))!r}))\n",
    "open": f"print(open({str(SACHS)!r}).read())\n",
    "pathlib": f"import pathlib\nprint(pathlib.Path({str(AUTO)!r}).read_text())\n",
    "os.open": f"import os\nprint(os.read(os.open({str(SACHS)!r}, os.O_RDONLY), 999))\n",
    "io.FileIO": f"import io\nprint(io.FileIO({str(AUTO)!r}).read())\n",
    "numpy.loadtxt": (
        f"import numpy as np\nprint(np.loadtxt({str(SACHS)!r}, dtype=str, delimiter=','))\n"
    ),
    "pandas.read_csv": f"import pandas as pd\nprint(pd.read_csv({str(AUTO)!r}).to_csv())\n",
    "linecache": (
        f"import linecache\nline = linecache.getline({str(SACHS)!r}, 2)\n"
        "print(line)\nassert line, 'nothing read'\n"
    ),
    "symlink in the working directory": (
        f"import os\nos.symlink({str(SACHS)!r}, 'truth.csv')\nprint(open('truth.csv').read())\n"
    ),
    "chdir then a relative path": (
        f"import os\nos.chdir({str(DATA)!r})\nprint(open('sachs_gt_edges.csv').read())\n"
    ),
    "/proc/self/root": f"print(open('/proc/self/root' + {str(SACHS)!r}).read())\n",
    "list the package": f"import os\nprint(os.listdir({str(PACKAGE)!r}))\n",
    "scandir the data": f"import os\nprint([e.name for e in os.scandir({str(DATA)!r})])\n",
    "glob the data": f"import glob\nprint(glob.glob({str(DATA)!r} + '/*gt*'))\n",
    "the user's home": f"import os\nprint(os.listdir({str(Path.home())!r}))\n",
    "/etc/passwd": "print(open('/etc/passwd').read())\n",
}


@pytest.fixture(params=["landlock", "hook"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run with the kernel's rules (skipped where there are none) or the audit hook alone."""
    if request.param == "landlock" and not LANDLOCK:
        pytest.skip("this kernel has no Landlock")
    if request.param == "hook":
        monkeypatch.setenv("SILICOLAB_SANDBOX_LANDLOCK", "0")
    return request.param


def _leaked(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.parametrize("case", sorted(ATTEMPTS))
def test_every_way_to_read_the_truth_fails(case: str, mode: str) -> None:
    res = run_python(ATTEMPTS[case], timeout_s=60)
    assert not res.ok, res.report()
    assert not _leaked(res.stdout + res.stderr), res.report()
    assert "sachs_gt_edges.csv" not in res.stdout and "datasets.py" not in res.stdout
    assert res.violation == "read", res.report()
    assert "reading files outside the working directory" in res.message


def test_the_run_directory_is_out_of_reach(tmp_path: Path, mode: str) -> None:
    run_dir = tmp_path / "runs" / "bench-1"
    run_dir.mkdir(parents=True)
    (run_dir / "truth.json").write_text('{"edges": [["pkc", "raf"]]}')
    code = (
        "import os, json\n"
        f"print(os.listdir({str(run_dir)!r}))\n"
        f"print(json.load(open({str(run_dir / 'truth.json')!r})))\n"
    )
    res = run_python(code, timeout_s=60)
    assert not res.ok and res.violation == "read", res.report()
    assert "truth.json" not in res.stdout and not _leaked(res.stdout)


def test_ctypes_cannot_open_the_truth(mode: str) -> None:
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL('libc.so.6', use_errno=True)\n"
        f"fd = libc.open({str(SACHS).encode()!r}, 0)\n"
        "assert fd >= 0, 'open refused'\n"
        "buf = ctypes.create_string_buffer(999)\n"
        "libc.read(fd, buf, 999)\n"
        "print(buf.value.decode())\n"
    )
    res = run_python(code, timeout_s=60)
    assert not res.ok and not _leaked(res.stdout), res.report()
    if mode == "landlock":  # the kernel refused the open; the hook saw no Python event
        assert "open refused" in res.stderr
    else:  # without the kernel rules the hook refuses libc's file functions
        assert res.violation == "read" and "ctypes symbol 'open'" in res.message


def test_cat_in_a_subprocess_fails(mode: str) -> None:
    code = f"import subprocess\nprint(subprocess.run(['cat', {str(SACHS)!r}]).returncode)\n"
    blocked = run_python(code, timeout_s=60)
    assert not blocked.ok and blocked.violation == "subprocess" and not _leaked(blocked.stdout)
    if mode == "landlock":  # subprocesses inherit the kernel's rules
        allowed = run_python(code, timeout_s=60, allow_subprocess=True)
        assert not _leaked(allowed.stdout + allowed.stderr), allowed.report()
        assert "Permission denied" in allowed.stderr and allowed.stdout.strip() == "1"


def test_legitimate_programs_still_work(mode: str) -> None:
    """numpy, pandas, scipy, matplotlib and causal-learn read the given data; the program
    may write and read back its own files."""
    data = "a,b,c\n" + "".join(f"{i},{2 * i + (i % 3)},{(i * 7) % 5}\n" for i in range(60))
    code = (
        "import json, os\n"
        "import numpy as np, pandas as pd, scipy.stats\n"
        "import matplotlib.pyplot as plt\n"
        "from causallearn.search.ConstraintBased.PC import pc\n"
        "df = pd.read_csv('data.csv')\n"
        "arr = np.loadtxt('data.csv', delimiter=',', skiprows=1)\n"
        "os.makedirs('out', exist_ok=True)\n"
        "df.describe().to_csv('out/summary.csv')\n"
        "back = pd.read_csv('out/summary.csv')\n"
        "cg = pc(arr, 0.05, 'fisherz', show_progress=False)\n"
        "plt.plot(arr[:, 0]); plt.savefig('plot.png')\n"
        "r = scipy.stats.pearsonr(arr[:, 0], arr[:, 1])[0]\n"
        "json.dump({'r': r, 'files': sorted(os.listdir('.')), 'rows': len(back)},"
        " open('result.json', 'w'))\n"
    )
    res = run_python(code, inputs={"data.csv": data}, timeout_s=120)
    assert res.ok, res.report()
    assert b'"rows": 8' in res.files["result.json"] and b"plot.png" in res.files["result.json"]


def test_the_policy_hides_every_silicolab_entry(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "site-packages"
    for name in ("numpy", "silicolab", "_editable_impl_silicolab.pth", "silicolab-1.dist-info"):
        (site / name).mkdir(parents=True)
    source = tmp_path / "repo" / "src"
    (source / "silicolab").mkdir(parents=True)
    policy = sandbox_reads.ReadPolicy(
        [str(tmp_path / "work")],
        [str(tmp_path / "lib")],
        [],
        sandbox_reads.silicolab_paths([str(site), str(source)]),
    )
    assert policy.allows(str(site / "numpy" / "core.py"))
    assert policy.allows(str(site / "silicolab-1.dist-info" / "METADATA"))
    assert not policy.allows(str(site / "silicolab" / "data.csv"))
    assert not policy.allows(str(site / "_editable_impl_silicolab.pth"))
    assert not policy.allows(str(source / "silicolab" / "__init__.py"))
    assert not policy.allows(str(PACKAGE / "discovery" / "data" / "sachs_gt_edges.csv"))
    assert policy.allows(str(tmp_path / "work" / "data.csv"))
