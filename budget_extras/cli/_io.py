"""Input and output handling shared by every ``budget-extras`` subcommand.

The policy (docs/cli.md, "Inputs and outputs"):

* :func:`check_paths` runs before any work: an output path that is (or links to) an input
  path is refused, two outputs may not be the same file, and every output's directory must
  exist and be writable (an output that is a directory is refused).
* :class:`AtomicOutputs` writes every output to a temporary file in the output's directory
  and renames all of them into place (``os.replace``) only when the whole run succeeded, so a
  failing run leaves neither a partial file nor an earlier output of the same run.
* :func:`read_csv`, :func:`read_model_text` and :func:`load_booster` turn unreadable files
  (missing, a directory, binary garbage, a parser or LightGBM error) into a one-line
  :class:`CLIError` naming the option and the file; :func:`read_rows`, the one reader of a
  CSV's feature rows, does the same for a CSV whose header lacks a model feature and keeps a
  model's pandas categorical columns.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

__all__ = [
    "AtomicOutputs",
    "CLIError",
    "check_paths",
    "costs_source",
    "load_booster",
    "model_categories",
    "read_costs",
    "read_csv",
    "read_ensemble",
    "read_model_text",
    "read_rows",
    "recorded_costs",
    "write_table",
]

PathArg = str | os.PathLike[str] | None
_T = TypeVar("_T")


class CLIError(Exception):
    """A user error the CLI reports in one line (bad file, missing column, ...)."""


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links, bind mounts, case-insensitive file systems
    except OSError:
        return False


def check_paths(inputs: Mapping[str, PathArg | Iterable[PathArg]], outputs: Mapping[str, PathArg]) -> None:
    """Refuse outputs that would overwrite an input or cannot be written; call before any work.

    Parameters
    ----------
    inputs : mapping of option name -> path (or None, or several paths)
        Every file the command reads.
    outputs : mapping of option name -> path or None
        Every file the command writes.

    Raises
    ------
    CLIError
        If an output is the same file as an input (also through a symbolic or hard link) or as
        another output, is a directory, or its directory does not exist or is not writable.
    """
    ins: list[tuple[str, str]] = []
    for opt, value in inputs.items():
        values = [value] if value is None or isinstance(value, str | os.PathLike) else list(value)
        ins.extend((opt, os.fspath(v)) for v in values if v is not None)
    outs = [(opt, os.fspath(p)) for opt, p in outputs.items() if p is not None]
    for i, (oopt, out) in enumerate(outs):
        for iopt, inp in ins:
            if _same_file(out, inp):
                raise CLIError(
                    f"{oopt} {out!r} is the same file as the input {iopt} {inp!r}; "
                    "refusing to overwrite an input"
                )
        for oopt2, out2 in outs[:i]:
            if _same_file(out, out2):
                raise CLIError(f"{oopt} {out!r} and {oopt2} {out2!r} are the same file")
        if os.path.isdir(out):
            raise CLIError(f"{oopt} {out!r} is a directory")
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            raise CLIError(f"{oopt} {out!r}: the directory {parent!r} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CLIError(f"{oopt} {out!r}: the directory {parent!r} is not writable")


class AtomicOutputs:
    """Collect outputs as temporary files; rename them into place only if the block succeeds.

    Examples
    --------
    >>> with AtomicOutputs() as out:  # doctest: +SKIP
    ...     model.save_model(out.path(args.output))
    ...     Path(out.path(args.json)).write_text(text)
    """

    def __init__(self) -> None:
        self._pending: list[tuple[str, str, str]] = []

    def path(self, final: str | os.PathLike[str], option: str = "output") -> str:
        """Return a temporary path in ``final``'s directory to write ``final``'s content to.

        Parameters
        ----------
        final : str or os.PathLike
            The output file that :class:`AtomicOutputs` moves into place on success.
        option : str, default "output"
            The command-line option that named ``final``: errors name it and ``final``, never
            the temporary file.

        Raises
        ------
        CLIError
            If no file can be created in ``final``'s directory.
        """
        final = os.fspath(final)
        directory = os.path.dirname(os.path.abspath(final))
        try:
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(final)}.", suffix=".tmp")
        except OSError as exc:
            raise CLIError(f"{option} {final!r}: cannot write in {directory!r}: {_describe_os(exc)}") from exc
        os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
        self._pending.append((tmp, final, option))
        return tmp

    def commit(self) -> None:
        """Rename every temporary file onto its final path."""
        pending, self._pending = self._pending, []
        for i, (tmp, final, option) in enumerate(pending):
            try:
                os.replace(tmp, final)
            except OSError as exc:
                self._pending = pending[i:]  # discarded by __exit__
                raise CLIError(f"{option} {final!r}: cannot write: {_describe_os(exc)}") from exc

    def discard(self) -> None:
        """Remove every temporary file not yet committed."""
        pending, self._pending = self._pending, []
        for tmp, _, _ in pending:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def _named(self, exc: BaseException) -> CLIError | None:
        """Return ``exc`` as a CLIError naming the option and the path given, if it is about a temporary file."""
        if not isinstance(exc, OSError):
            return None
        for tmp, final, option in self._pending:
            if exc.filename is not None and os.fspath(exc.filename) == tmp:
                return CLIError(f"{option} {final!r}: cannot write: {_describe_os(exc)}")
        return None

    def __enter__(self) -> AtomicOutputs:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                self.commit()
            finally:
                self.discard()
            return
        named = None if exc is None else self._named(exc)
        self.discard()
        if named is not None:
            raise named from exc


def _describe_os(exc: OSError) -> str:
    """Return an OSError's reason without the file name (the caller names the path the user gave)."""
    return exc.strerror or type(exc).__name__


def recorded_costs(ensemble: Any) -> Any:
    """Return the feature costs a model file records (its ``cegb_penalty_*`` parameters), or None.

    A model trained with CEGB costs records them in its ``parameters:`` section:
    ``cegb_penalty_feature_lazy`` (a grouped feature carries its group's cost),
    ``cegb_penalty_feature_coupled``, ``cegb_penalty_feature_split`` (added to the uniform
    ``cegb_penalty_split``) and ``cegb_feature_group``. A model trained without them records
    empty lists and a zero ``cegb_penalty_split``: None.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The model (its ``parameters`` and ``feature_names``).

    Returns
    -------
    FeatureCosts or None

    Raises
    ------
    ValueError
        If a recorded list does not hold one number per feature.
    """
    from ..core._costs import FeatureCosts

    p, n = ensemble.parameters, ensemble.n_features

    def vector(key: str) -> list[float] | None:
        text = p.get(key, "").strip().strip("[]").strip()
        if not text:
            return None
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            raise ValueError(f"the model file records {key} as {text[:60]!r}; expected numbers") from None
        if len(values) != n:
            raise ValueError(
                f"the model file records {key} with {len(values)} values; the model has {n} features"
            )
        return values

    lazy, coupled = vector("cegb_penalty_feature_lazy"), vector("cegb_penalty_feature_coupled")
    split, group = vector("cegb_penalty_feature_split"), vector("cegb_feature_group")
    try:
        uniform_split = float(p.get("cegb_penalty_split", "0") or 0)
    except ValueError:
        raise ValueError(
            f"the model file records cegb_penalty_split as {p.get('cegb_penalty_split')!r}; expected a number"
        ) from None
    if lazy is None and coupled is None and split is None and uniform_split == 0:
        return None
    return FeatureCosts(
        lazy if lazy is not None else [0.0] * n,
        coupled=coupled,
        groups=None if group is None else [int(g) if g >= 0 else None for g in group],
        split=[uniform_split + v for v in (split or [0.0] * n)],
        feature_names=ensemble.feature_names or None,
        n_features=n,
    )


def read_costs(path: PathArg, feature_names: Sequence[str], *, ensemble: Any = None) -> Any:
    """Return the costs CSV ``path`` read for ``feature_names``; without ``path``, the default costs.

    The default, the same for every subcommand that reads a saved model: the costs the model
    records (:func:`recorded_costs`, when ``ensemble`` is given and records some), else every
    feature at cost 1. :func:`costs_source` says which one was used.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The ``--costs`` file, read by ``as_feature_costs`` (the cost input of every method).
    feature_names : sequence of str
        The features, in the model's order.
    ensemble : TreeEnsemble, optional
        The saved model whose recorded costs are the default.

    Returns
    -------
    FeatureCosts
    """
    from ..core._costs import FeatureCosts, as_feature_costs

    if path is not None:
        return as_feature_costs(path, n_features=len(feature_names), feature_names=feature_names, name="--costs")
    saved = None if ensemble is None else recorded_costs(ensemble)
    if saved is not None:
        return saved
    return FeatureCosts.uniform(len(feature_names), feature_names=feature_names)


def costs_source(path: PathArg, ensemble: Any = None) -> str:
    """Say where :func:`read_costs` took the costs from (one line for the command's output).

    Parameters
    ----------
    path : str or os.PathLike, optional
        The ``--costs`` file.
    ensemble : TreeEnsemble, optional
        The saved model.

    Returns
    -------
    str
    """
    if path is not None:
        return f"--costs {os.fspath(path)!r}"
    if ensemble is not None and recorded_costs(ensemble) is not None:
        return "the costs recorded in the model file (its cegb_penalty_* parameters; --costs overrides them)"
    return "every feature costs 1 (no --costs given and the model file records no costs)"


def write_table(table: Any, output: PathArg, **kwargs: Any) -> None:
    """Write ``table`` as CSV to ``output`` (atomically) or, when ``output`` is None, to standard output.

    Parameters
    ----------
    table : pandas.DataFrame
        The table.
    output : str or os.PathLike, optional
        The file to write (checked by :func:`check_paths` beforehand).
    **kwargs
        Passed to ``DataFrame.to_csv`` (index handling).
    """
    if output is None:
        print(table.to_csv(**kwargs), end="")
    else:
        with AtomicOutputs() as outputs:
            table.to_csv(outputs.path(output), **kwargs)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, UnicodeDecodeError):
        return f"not a text file ({exc.reason} at byte {exc.start})"
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _read(
    path: str | os.PathLike[str],
    option: str,
    read: Callable[[str], _T],
    errors: tuple[type[BaseException], ...],
    what: str,
) -> _T:
    """Return ``read(path)``; a directory or one of ``errors`` is a one-line :class:`CLIError`."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise CLIError(f"{option} {p!r}: is a directory")
    try:
        return read(p)
    except errors as exc:
        raise CLIError(f"{option} {p!r}: cannot read {what}: {_describe(exc)}") from exc


def model_categories(model: Any) -> dict[str, list[Any]]:
    """Return each pandas categorical feature of a model with the categories it was trained on.

    LightGBM records them in the model file: the ``pandas_categorical`` lists, in column order,
    and the ``categorical_feature`` parameter (feature indices or names).

    Parameters
    ----------
    model : lightgbm.Booster or TreeEnsemble
        The model.

    Returns
    -------
    dict
        Feature name -> categories (empty for a model trained without pandas categoricals).

    Raises
    ------
    CLIError
        If the model records a number of category lists other than its categorical features'.
    """
    if hasattr(model, "feature_name"):  # a lightgbm.Booster
        names, spec = list(model.feature_name()), model.params.get("categorical_feature")
    else:
        names, spec = list(model.feature_names), model.parameters.get("categorical_feature")
    cats = model.pandas_categorical
    if not cats:
        return {}
    items = [str(v).strip() for v in (spec.split(",") if isinstance(spec, str) else spec or [])]
    items = [i[5:] if i.startswith("name:") else i for i in items if i]
    cols = [names[int(i)] if i.isdigit() and int(i) < len(names) else i for i in items]
    if len(cols) != len(cats) or any(c not in names for c in cols):
        raise CLIError(
            f"the model records {len(cats)} pandas category lists but its categorical features are {cols[:6]!r}; "
            "the CSV columns cannot be matched to them"
        )
    return {c: list(v) for c, v in zip(cols, cats, strict=True)}


def read_rows(
    path: str | os.PathLike[str],
    option: str,
    features: Sequence[str] | None = None,
    *,
    label: str | None = None,
    label_required: bool = False,
    categories: Mapping[str, Sequence[Any]] | None = None,
    new_categories: bool = False,
) -> tuple[Any, Any]:
    """Read a CSV's feature rows and labels: the one CSV-to-rows reader of every subcommand.

    The feature columns are matched by name (other columns are ignored) and returned in the
    order of ``features``; a model's pandas categorical features (``categories``) become pandas
    categoricals with the model's categories, so the estimators map them as LightGBM does
    (a category the model has not seen becomes missing).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (with a header row).
    option : str
        The command-line option that named the file, used in error messages.
    features : sequence of str, optional
        The feature columns, in the model's order (default: every column but ``label``).
    label : str, optional
        The label column, returned apart (None when the file has none).
    label_required : bool, default False
        Refuse a file without the ``label`` column.
    categories : mapping of str to sequence, optional
        Categorical features and their categories (:func:`model_categories`).
    new_categories : bool, default False
        Read the other non-numeric feature columns as categoricals of the values they hold (for
        training); without it, such a column is an error.

    Returns
    -------
    X : pandas.DataFrame
        Numeric, bool and categorical feature columns.
    y : numpy.ndarray or None
        The labels.

    Raises
    ------
    CLIError
        If the file cannot be read, lacks the label or a feature column, or has a non-numeric
        feature column that is not categorical.
    """
    import pandas as pd

    cats = dict(categories or {})
    text = {c: str for c, v in cats.items() if all(isinstance(x, str) for x in v)}  # "01" stays "01"
    df = read_csv(path, option, dtype=text or None)
    where = f"{option} {os.fspath(path)!r}"
    shown = f"{[str(c) for c in df.columns][:6]!r}{' ...' if df.shape[1] > 6 else ''}"
    if label is not None and label_required and label not in df.columns:
        raise CLIError(f"{where} has no label column {label!r} (the file has {shown})")
    y = df[label].to_numpy() if label is not None and label in df.columns else None
    names = list(features) if features is not None else [c for c in df.columns if c != label]
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise CLIError(
            f"{where} lacks feature columns {missing[:6]!r}{' ...' if len(missing) > 6 else ''}: the header must "
            f"name the model's {len(names)} features; missing {missing[:6]!r} (the file has {shown})"
        )
    X = df[names].copy()
    for c in names:
        if c in cats:
            X[c] = pd.Categorical(X[c], categories=list(cats[c]))
        elif not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c])):
            if not new_categories:
                raise CLIError(
                    f"{where} has the non-numeric feature column {c!r} and the model has no categories for it "
                    "(a model trained on a pandas categorical column records them)"
                )
            X[c] = X[c].astype("category")
    return X, y


def read_csv(path: str | os.PathLike[str], option: str, **kwargs: Any) -> Any:
    """``pandas.read_csv`` with one-line errors naming ``option`` and the file.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    option : str
        The command-line option that named the file, used in error messages.
    **kwargs
        Passed to ``pandas.read_csv``.

    Raises
    ------
    CLIError
        If the file is missing, a directory, not UTF-8 text or not parseable as CSV.
    """
    import pandas as pd

    errors = (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError)
    return _read(path, option, lambda p: pd.read_csv(p, **kwargs), errors, "CSV")


def read_model_text(path: str | os.PathLike[str], option: str) -> str:
    """Read a LightGBM model text file, with one-line errors naming ``option`` and the file.

    Parameters
    ----------
    path : str or os.PathLike
        The model text file.
    option : str
        The command-line option that named the file, used in error messages.

    Raises
    ------
    CLIError
        If the file is missing, a directory, or not UTF-8 text.
    """

    def read_text(p: str) -> str:
        return Path(p).read_text(encoding="utf-8")

    return _read(path, option, read_text, (OSError, UnicodeDecodeError), "the LightGBM model file")


def load_booster(path: str | os.PathLike[str], option: str) -> Any:
    """Load a ``lightgbm.Booster`` from a model text file, with one-line errors naming the file.

    Parameters
    ----------
    path : str or os.PathLike
        The model text file.
    option : str
        The command-line option that named the file, used in error messages.

    Raises
    ------
    CLIError
        If the file cannot be read or LightGBM refuses it.
    """
    import lightgbm as lgb

    from ..core._ensemble import TreeEnsemble

    text = read_model_text(path, option)
    if "Tree=" not in text and "tree\n" not in text[:64]:
        raise CLIError(f"{option} {os.fspath(path)!r}: not a LightGBM model text file")
    try:  # the core's loader first: a broken file is one line here, never a crash inside LightGBM
        TreeEnsemble.from_model_string(text)
    except ValueError as exc:
        raise CLIError(f"{option} {os.fspath(path)!r}: {_describe(exc)}") from exc
    try:
        return lgb.Booster(model_str=text)
    except lgb.basic.LightGBMError as exc:
        raise CLIError(f"{option} {os.fspath(path)!r}: LightGBM cannot load the model: {_describe(exc)}") from exc


def read_ensemble(path: str | os.PathLike[str], option: str) -> Any:
    """Parse a LightGBM model text file into a ``TreeEnsemble``; errors name ``option`` and the file.

    Parameters
    ----------
    path : str or os.PathLike
        The model text file.
    option : str
        The command-line option that named the file, used in error messages.

    Raises
    ------
    CLIError
        If the file cannot be read or is not a model the core can parse (``ModelParseError``).
    """
    from ..core._ensemble import TreeEnsemble

    text = read_model_text(path, option)
    try:
        return TreeEnsemble.from_model_string(text)
    except ValueError as exc:
        raise CLIError(f"{option} {os.fspath(path)!r}: {_describe(exc)}") from exc
