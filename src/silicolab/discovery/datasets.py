"""The three benchmark datasets of the SCP/MAC papers, shipped with the package, and a
checked loader for the user's own CSV files.

The bundled files (``silicolab/discovery/data/``) are byte copies of SCP's
(``mas-takayama/LLM-and-SCD`` at 5aaeaea); ``data/LICENSES.md`` keeps their provenance and
terms. Ground truths are ``cause,effect`` edge lists (SCP's matrices are row = effect; the
edge lists remove any doubt about direction).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.core.files import read_user_text
from silicolab.scm.graph import CausalGraph

DatasetName = Literal["auto_mpg", "dwd_climate", "sachs"]
MIN_ROWS = 10


@dataclass(frozen=True)
class Dataset:
    """A data table, its ground-truth graph (``None`` when unknown) and the words an LLM
    needs to reason about it: a ``description`` and a one-line meaning per variable."""

    name: str
    data: pd.DataFrame
    truth: CausalGraph | None
    description: str
    variables: dict[str, str] = field(default_factory=dict)
    citation: str = ""
    license: str = ""

    def __repr__(self) -> str:
        rows, cols = self.data.shape
        edges = "unknown" if self.truth is None else len(self.truth.edges)
        return f"Dataset({self.name!r}, rows={rows}, variables={cols}, truth_edges={edges})"

    def _repr_html_(self) -> str:
        """Jupyter: the description, the ground truth's size and the first rows."""
        import html

        truth = (
            "no ground truth"
            if self.truth is None
            else f"ground truth: {len(self.truth.edges)} edges"
        )
        head = self.data.head().to_html(border=0)
        return (
            f"<div><strong>{html.escape(self.name)}</strong>: "
            f"{html.escape(self.description)} ({self.data.shape[0]} rows; {truth})"
            f"{head}</div>"
        )


_SACHS_PROTEINS = {
    "raf": "Raf kinase (phosphorylated), flow-cytometry intensity",
    "mek": "MEK1/2 kinase (phosphorylated), flow-cytometry intensity",
    "plc": "phospholipase C-gamma (phosphorylated), flow-cytometry intensity",
    "pip2": "phosphatidylinositol 4,5-bisphosphate (PIP2) level",
    "pip3": "phosphatidylinositol 3,4,5-trisphosphate (PIP3) level",
    "erk": "ERK1/2 (p44/42 MAPK, phosphorylated), flow-cytometry intensity",
    "akt": "Akt kinase (phosphorylated at S473), flow-cytometry intensity",
    "pka": "protein kinase A activity, flow-cytometry intensity",
    "pkc": "protein kinase C activity, flow-cytometry intensity",
    "p38": "p38 MAPK (phosphorylated), flow-cytometry intensity",
    "jnk": "JNK kinase (phosphorylated), flow-cytometry intensity",
}

_BUNDLED: dict[str, dict[str, object]] = {
    "auto_mpg": {
        "description": (
            "Auto MPG: 392 cars from the 1970s-80s (UCI data without the 6 cars with missing "
            "horsepower), five continuous engineering measurements per car."
        ),
        "variables": {
            "Displacement": "engine displacement (cubic inches)",
            "Mpg": "fuel economy (miles per US gallon)",
            "Horsepower": "engine power (horsepower)",
            "Weight": "vehicle weight (pounds)",
            "Acceleration": "time to accelerate from 0 to 60 mph (seconds)",
        },
        "citation": (
            "Quinlan, R. (1993). Auto MPG. UCI Machine Learning Repository. "
            "doi:10.24432/C5859H. Benchmark version: Takayama et al. (2024), arXiv 2402.01454."
        ),
        "license": "CC BY 4.0 (UCI Machine Learning Repository)",
    },
    "dwd_climate": {
        "description": (
            "DWD climate: one row per German weather station (349 stations), with its "
            "geography and long-term climate averages."
        ),
        "variables": {
            "Altitude": "station altitude above sea level (m)",
            "Temperature": "mean annual air temperature at the station (degrees C)",
            "Precipitation": "mean annual precipitation at the station (mm)",
            "Longitude": "station longitude (degrees east)",
            "Sunshine": "mean annual sunshine duration at the station (hours)",
            "Latitude": "station latitude (degrees north)",
        },
        "citation": (
            "Source: Deutscher Wetterdienst, via Mooij et al. (2016), JMLR 17(32), Tuebingen "
            "cause-effect pairs 1-4, 20, 21. Benchmark version: Takayama et al. (2024)."
        ),
        "license": "DWD open data; attribution required: 'Source: Deutscher Wetterdienst'",
    },
    "sachs": {
        "description": (
            "Sachs: flow-cytometry measurements of 11 phosphorylated proteins and "
            "phospholipids in human T cells, 7466 cells pooled over all experimental "
            "conditions (including interventional ones), raw intensities."
        ),
        "variables": _SACHS_PROTEINS,
        "citation": (
            "Sachs, K., Perez, O., Pe'er, D., Lauffenburger, D. A., Nolan, G. P. (2005). Causal "
            "protein-signaling networks derived from multiparameter single-cell data. Science "
            "308:523-529. Benchmark version: Takayama et al. (2024)."
        ),
        "license": (
            "published research data (Science 2005 supplement); also in the MIT-licensed "
            "cdt 0.6.0 wheel as cyto_full_data.csv; cite Sachs et al. (2005)"
        ),
    },
}


def names() -> tuple[str, ...]:
    """The names :func:`load` accepts."""
    return tuple(_BUNDLED)


def load(name: DatasetName) -> Dataset:
    """A bundled dataset with its ground truth, read from the installed package data."""
    if name not in _BUNDLED:
        raise InputError(f"unknown dataset {name!r}; choose one of {list(_BUNDLED)}")
    meta = _BUNDLED[name]
    folder = resources.files("silicolab.discovery") / "data"
    with (folder / f"{name}.csv").open("rb") as handle:
        data = pd.read_csv(handle)
    with (folder / f"{name}_gt_edges.csv").open("rb") as handle:
        edges = pd.read_csv(handle)
    truth = CausalGraph(list(data.columns), list(edges.itertuples(index=False, name=None)))
    return Dataset(
        name=name,
        data=data,
        truth=truth,
        description=str(meta["description"]),
        variables=dict(meta["variables"]),  # type: ignore[call-overload]
        citation=str(meta["citation"]),
        license=str(meta["license"]),
    )


def check_data(data: pd.DataFrame, *, source: str = "the data") -> None:
    """Raise :class:`InputError` unless ``data`` is a numeric table discovery can use: no
    missing or infinite values, no constant column, at least 2 columns and enough rows."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(
            f"{source} must be a pandas DataFrame with one column per variable; got "
            f"{type(data).__name__}. Wrap arrays as pd.DataFrame(x, columns=names)"
        )
    if data.shape[1] < 2:
        raise InputError(f"{source} has {data.shape[1]} column(s); discovery needs at least 2")
    if len(set(map(str, data.columns))) != data.shape[1]:
        raise InputError(f"{source} repeats a column name; give every column its own name")
    bad = [str(c) for c in data.columns if not pd.api.types.is_numeric_dtype(data[c])]
    if bad:
        raise InputError(
            f"{source} has non-numeric column(s) {bad}; encode them as numbers "
            "(e.g. pd.get_dummies or .astype(float)) or drop them"
        )
    missing = data.isna().sum()
    if missing.any():
        cols = {str(c): int(k) for c, k in missing.items() if k}
        raise InputError(
            f"{source} has {int(missing.sum())} missing value(s) in column(s) {cols}; drop "
            "those rows with data.dropna() or impute them first"
        )
    values = data.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        finite = np.isfinite(values).all(axis=0)
        cols = [str(c) for c, ok in zip(data.columns, finite, strict=True) if not ok]
        raise InputError(f"{source} has infinite values in column(s) {cols}; remove those rows")
    if len(data) < MIN_ROWS or len(data) < data.shape[1]:
        raise InputError(
            f"{source} has {len(data)} rows for {data.shape[1]} columns; discovery needs at "
            f"least {MIN_ROWS} rows and more rows than columns"
        )
    constant = [str(c) for c, v in zip(data.columns, values.T, strict=True) if np.ptp(v) == 0]
    if constant:
        raise InputError(
            f"{source} has constant column(s) {constant}, which carry no information about "
            "causes; drop them"
        )
    dependent = linearly_dependent_columns(values, [str(c) for c in data.columns])
    if dependent:
        raise InputError(
            f"{source} has linearly dependent columns {dependent} (one is a copy, a rescaling "
            "or a sum of the others), so their correlation matrix is singular and the "
            "statistical tests cannot run; drop one of them"
        )


def linearly_dependent_columns(values: np.ndarray, names: list[str]) -> list[str]:
    """The names of a set of columns of ``values`` that are (numerically) linearly dependent,
    or ``[]``: a perfectly correlated pair when there is one, else the columns that carry
    weight in the direction the data does not span."""
    centered = values - values.mean(axis=0)
    scale = centered.std(axis=0)
    z = centered / np.where(scale > 0, scale, 1.0)
    corr = np.corrcoef(z, rowvar=False)
    n = len(names)
    for i in range(n):
        for j in range(i + 1, n):
            if abs(corr[i, j]) > 1 - 1e-10:
                return [names[i], names[j]]
    _, singular, vt = np.linalg.svd(z / np.sqrt(len(z)), full_matrices=False)
    if singular[-1] > 1e-8 * max(singular[0], 1.0):
        return []
    weights = np.abs(vt[-1])
    return [names[k] for k in range(n) if weights[k] > 1e-6]


def load_csv(path: str | Path, *, truth_edges: str | Path | None = None) -> Dataset:
    """Read a numeric CSV (one column per variable, a header row) and, optionally, a
    ground truth as a ``cause,effect`` CSV; every problem is an :class:`InputError` that
    says how to fix it."""
    path = Path(path)
    data = _read_csv(path, "data")
    check_data(data, source=str(path))
    truth = None
    if truth_edges is not None:
        truth = _read_truth(Path(truth_edges), list(map(str, data.columns)))
    data.columns = [str(c) for c in data.columns]
    return Dataset(
        name=path.stem,
        data=data,
        truth=truth,
        description=f"user data from {path.name}: {len(data)} rows, {data.shape[1]} variables",
        variables={str(c): f"column {c!r} of {path.name}" for c in data.columns},
        citation="",
        license="",
    )


def _read_csv(path: Path, what: str) -> pd.DataFrame:
    text = read_user_text(path, what=f"{what} file", damaged="save it as CSV in UTF-8")
    try:
        table = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"cannot parse {what} file {path} as CSV ({reason}); it needs a header row and "
            "comma-separated values"
        ) from exc
    if table.shape[1] == 1:
        header = str(table.columns[0])
        for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
            if sep in header:
                raise InputError(
                    f"{what} file {path} is separated by {name}, not commas (header "
                    f"{header!r}); save it as comma-separated values"
                )
    if table.empty:
        raise InputError(
            f"{what} file {path} has a header row ({', '.join(map(str, table.columns))}) but "
            "no data rows"
        )
    return table


def _read_truth(path: Path, columns: list[str]) -> CausalGraph:
    table = _read_csv(path, "truth")
    wanted = {"cause", "effect"}
    if not wanted <= set(table.columns):
        raise InputError(
            f"truth file {path} needs the columns 'cause,effect' (one edge per row); it has "
            f"{list(table.columns)}"
        )
    edges = [(str(c), str(e)) for c, e in table[["cause", "effect"]].itertuples(index=False)]
    unknown = sorted({n for e in edges for n in e} - set(columns))
    if unknown:
        raise InputError(
            f"truth file {path} names variable(s) {unknown} that are not data columns "
            f"{columns}; fix the spelling"
        )
    return CausalGraph(columns, edges)
