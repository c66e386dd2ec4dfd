"""One rank of a 2-process LightGBM training over 127.0.0.1 sockets (tests/fork/test_distributed.py).

Usage: python distributed_worker.py SPEC.json. The spec names the rank, the machine list, the data
directory, how rows are partitioned and the configurations to train; the models (text) are written
to spec["out"] as JSON {name: model string}. Runs under the fork and under upstream's wheel (the
defect tests), so it uses only the public Python API plus LGBM_NetworkInit / LGBM_NetworkFree, and
never imports budget_extras (not installed beside upstream's wheel).

Partitions:
  bin     every rank loads data_dir/train.bin with pre_partition=false: LightGBM keeps the stored
          bin mappers and gives each row to one rank at random (shared bins)
  random  rows split at random (seeded), Dataset built with reference= the full Dataset
          constructed before the network starts (shared bins)
  skew    rank 0 gets the rows with x0 < 0.3, rank 1 the others, with reference= the full Dataset
"""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

import numpy as np


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    import lightgbm as lgb
    from lightgbm.basic import _LIB, _c_str, _safe_call

    data_dir = Path(spec["data_dir"])
    rank = spec["rank"]
    ds_params = spec["ds_params"]
    X = np.load(data_dir / "X.npy")
    y = np.load(data_dir / "y.npy")
    partition = spec["partition"]
    ref = None
    if partition != "bin":
        # bins from the full data, built before the network exists
        ref = lgb.Dataset(X, y, params=ds_params, free_raw_data=False).construct()
        if partition == "skew":
            mine = (X[:, 0] < 0.3) if rank == 0 else (X[:, 0] >= 0.3)
        else:
            mine = np.random.default_rng(7).integers(0, 2, size=len(y)) == rank
        X_local, y_local = X[mine], y[mine]

    _safe_call(_LIB.LGBM_NetworkInit(_c_str(spec["machines"]), ctypes.c_int(spec["port"]),
                                     ctypes.c_int(1), ctypes.c_int(2)))
    try:
        def dataset():
            if partition == "bin":
                return lgb.Dataset(str(data_dir / "train.bin"), params=dict(ds_params, pre_partition=False))
            return lgb.Dataset(X_local, y_local, reference=ref, params=ds_params, free_raw_data=False)

        out = {}
        for name, cfg in spec["configs"].items():
            params = dict(cfg["params"], num_machines=2)
            booster = lgb.train(params, dataset(), num_boost_round=cfg["rounds"])
            if cfg.get("continue_rounds"):
                booster = lgb.train(params, dataset(), num_boost_round=cfg["continue_rounds"],
                                    init_model=booster)
            out[name] = booster.model_to_string()
    finally:
        _safe_call(_LIB.LGBM_NetworkFree())
    Path(spec["out"]).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
