"""Bundled datasets (package data) and the checked CSV loader."""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.discovery import datasets
from silicolab.discovery.datasets import check_data, load, load_csv

UPSTREAM_SHA256 = {
    "auto_mpg": "52a14349bc2b115831a9ed1558d5e95e791b430ae762db913b3ef50ba377cdd3",
    "dwd_climate": "81f7cb2ceb9784cf9642fecd99acbbcfe0de888e18d9a840fef881f884439307",
    "sachs": "981b533bec148baeec3fe00f1ee637cbde7558787eecdc596c3882ae7b3ebb9d",
}


@pytest.mark.parametrize(
    ("name", "shape", "n_edges"),
    [("auto_mpg", (392, 5), 5), ("dwd_climate", (349, 6), 6), ("sachs", (7466, 11), 19)],
)
def test_bundled_datasets(name, shape, n_edges):
    ds = load(name)
    assert ds.data.shape == shape
    assert len(ds.truth.edges) == n_edges
    assert list(ds.truth.nodes) == list(ds.data.columns)
    assert set(ds.variables) == set(ds.data.columns)
    assert all(ds.variables.values()) and ds.description and ds.citation and ds.license
    assert not ds.data.isna().any().any()


def test_ground_truth_direction_is_cause_effect():
    assert load("auto_mpg").truth.has_edge("Weight", "Mpg")
    assert load("dwd_climate").truth.has_edge("Altitude", "Temperature")
    sachs = load("sachs").truth
    assert sachs.has_edge("pkc", "pka") and sachs.has_edge("erk", "akt")
    assert not sachs.has_edge("pka", "raf")  # cdt's list has it; SCP's does not


def test_package_data_is_installed_as_byte_copies_with_licenses():
    folder = resources.files("silicolab.discovery") / "data"
    for name, digest in UPSTREAM_SHA256.items():
        assert hashlib.sha256((folder / f"{name}.csv").read_bytes()).hexdigest() == digest
        assert (folder / f"{name}_gt_edges.csv").is_file()
    notes = (folder / "LICENSES.md").read_text(encoding="utf-8")
    for phrase in ("no LICENSE", "CC BY 4.0", "Deutscher Wetterdienst", "Sachs"):
        assert phrase in notes


def test_unknown_dataset_lists_the_names():
    with pytest.raises(InputError, match=r"auto_mpg.*dwd_climate.*sachs"):
        load("iris")
    assert datasets.names() == ("auto_mpg", "dwd_climate", "sachs")


# -- load_csv -------------------------------------------------------------------------------


@pytest.fixture
def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(30, 3)), columns=["x", "y", "z"])


def test_load_csv_with_truth(tmp_path, table):
    table.to_csv(tmp_path / "mine.csv", index=False)
    (tmp_path / "truth.csv").write_text("cause,effect\nx,y\ny,z\n")
    ds = load_csv(tmp_path / "mine.csv", truth_edges=tmp_path / "truth.csv")
    assert ds.name == "mine" and ds.data.shape == (30, 3)
    assert ds.truth.edges == (("x", "y"), ("y", "z"))
    assert load_csv(tmp_path / "mine.csv").truth is None


def test_load_csv_missing_file(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_csv(tmp_path / "nope.csv")


@pytest.mark.parametrize("content", ["", "a,b\n1,2\n3,4,5,6\n"])
def test_load_csv_unparseable(tmp_path, content):
    (tmp_path / "bad.csv").write_text(content)
    with pytest.raises(InputError, match="cannot parse"):
        load_csv(tmp_path / "bad.csv")


def test_load_csv_missing_values(tmp_path, table):
    table.loc[[1, 2], "y"] = np.nan
    table.loc[3, "z"] = np.nan
    table.to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(InputError, match=r"3 missing value.*'y': 2, 'z': 1.*dropna"):
        load_csv(tmp_path / "m.csv")


def test_load_csv_non_numeric(tmp_path, table):
    table.assign(colour="red").to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(InputError, match=r"non-numeric column\(s\) \['colour'\]"):
        load_csv(tmp_path / "m.csv")


def test_load_csv_constant_column(tmp_path, table):
    table.assign(k=1.0).to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(InputError, match=r"constant column\(s\) \['k'\]"):
        load_csv(tmp_path / "m.csv")


@pytest.mark.parametrize("rows", [5, 12])
def test_load_csv_too_few_rows(tmp_path, rows):
    rng = np.random.default_rng(1)
    pd.DataFrame(rng.normal(size=(rows, 14))).to_csv(tmp_path / "m.csv", index=False)
    with pytest.raises(InputError, match=f"{rows} rows for 14 columns"):
        load_csv(tmp_path / "m.csv")


def test_load_csv_bad_truth(tmp_path, table):
    table.to_csv(tmp_path / "m.csv", index=False)
    (tmp_path / "t.csv").write_text("from,to\nx,y\n")
    with pytest.raises(InputError, match="cause,effect"):
        load_csv(tmp_path / "m.csv", truth_edges=tmp_path / "t.csv")
    (tmp_path / "t.csv").write_text("cause,effect\nx,w\n")
    with pytest.raises(InputError, match=r"\['w'\]"):
        load_csv(tmp_path / "m.csv", truth_edges=tmp_path / "t.csv")


def test_check_data_rejects_infinite_and_single_columns(table):
    with pytest.raises(InputError, match=r"infinite values in column\(s\) \['x'\]"):
        check_data(table.assign(x=np.inf))
    with pytest.raises(InputError, match="at least 2"):
        check_data(table[["x"]])
