# python/nbody/__init__.py - nbody from Python: set up, run, inspect, steer and save simulations.
"""nbody: gravitational N-body simulations on CPUs and NVIDIA GPUs, from Python.

The same engine as the ``nbody`` command line (all-pairs, Plummer-softened, G = 1), with its options,
defaults, names and error messages, and results bit for bit equal to it::

    import nbody
    sim = nbody.Simulation(scenario="plummer", n=4096)
    sim.run(t_end=10.0, callback=lambda s: print(s.time, s.energy()), every=100)
    sim.checkpoint("run.h5")            # `nbody --restart run.h5` or Simulation.restart continue it

Bad input raises ``ValueError`` (a value out of range, a name nbody does not know, a bad file; a
missing one: ``MissingFileError``, also a ``FileNotFoundError``; one it may not read: ``UnreadableFileError``, also a
``PermissionError``) or
``TypeError`` (a value of the wrong kind), each naming the argument; a failure of the machine raises
``RuntimeError`` (a run's final checkpoint or save that could not be written: ``OutputNotWrittenError``, once
the run's other outputs are written). Ctrl-C during ``step``/``run`` raises ``KeyboardInterrupt`` after the step in
progress, with the state intact. See docs/python.md.
"""

import difflib
import errno
import functools
import inspect
import logging
import math
import numbers
import os
import sys
import typing
import warnings

import numpy as np

from . import _nbody

__all__ = ["Simulation", "DeviceView", "MissingFileError", "UnreadableFileError", "OutputNotWrittenError", "devices",
           "why_no_devices", "cuda_built", "checkpoints_built", "mpi_built", "names"]

_log = logging.getLogger("nbody")

# The version of the engine this module runs (the command line's `nbody --version`; a checkpoint records it as
# Code/Code): the one to cite with a result.
__version__ = _nbody.__version__

# Python's default body count: small enough for a laptop's CPU, large enough to be a cluster.
DEFAULT_BODIES = 4096


def devices():
    """The visible CUDA devices, as a list of dicts.

    Each has ``ordinal``, ``name``, ``multiprocessors``, ``memory_bytes``, ``compute_capability``
    (major, minor), ``clock_mhz``, ``uuid`` and ``peers``: the ordinals of the other devices whose
    memory it can reach directly (the peer-access matrix, row by row). Empty without a GPU, or in a
    build without CUDA (``nbody.why_no_devices()`` says why).
    """
    return _nbody.devices()


def why_no_devices():
    """Why ``devices()`` is empty ("" when it is not)."""
    return _nbody.why_no_devices()


def cuda_built():
    """True when this nbody was built with the CUDA engine."""
    return _nbody.cuda_built()


def checkpoints_built():
    """True when this nbody was built with HDF5 (``checkpoint`` and ``restart`` need it)."""
    return _nbody.checkpoints_built()


def mpi_built():
    """True when this nbody was built with MPI (``comm=`` needs it)."""
    return _nbody.mpi_built()


def names(option):
    """The names an option takes, e.g. ``names("integrator")``: the command line's own table."""
    if not isinstance(option, str):
        raise TypeError(f"names(option): option must be a str such as 'integrator', got {type(option).__name__} "
                        f"{option!r}")
    return list(_nbody.names(option))


class OutputNotWrittenError(RuntimeError):
    """A run's final ``checkpoint`` or ``save`` file that could not be written (a full disk, a folder gone), raised
    once the run has ended and written its other outputs, as ``nbody --run`` exits 1: the steps are done and the
    simulation holds their state, which ``checkpoint`` or ``save`` can write elsewhere. ``outputs`` is
    ``last_run["outputs_not_written"]``."""

    def __init__(self, message, outputs):
        super().__init__(message)
        self.outputs = outputs


class _FileError:
    """A file's OSError that is also a ValueError: the library's message, ``errno`` and ``filename`` as ``open``
    sets them."""

    _errno = 0

    def __init__(self, message, path=None):
        super().__init__(message)
        self.errno, self.strerror, self.filename = self._errno, os.strerror(self._errno), path

    def __str__(self):
        return self.args[0]  # the library's message, not OSError's "[Errno 2] ..." made of the fields


class MissingFileError(_FileError, FileNotFoundError, ValueError):
    """A file to read (``Simulation.restart``, ``Simulation.load``) that does not exist. A ValueError, as every bad
    file is, and a FileNotFoundError (an OSError, ``errno`` ENOENT, ``filename`` the path), as ``open`` raises, so
    that either ``except`` catches it (as ``io.UnsupportedOperation`` is both OSError and ValueError)."""

    _errno = errno.ENOENT


class UnreadableFileError(_FileError, PermissionError, ValueError):
    """A file to read (``Simulation.restart``, ``Simulation.load``) that this process may not read. A ValueError, as
    every bad file is, and a PermissionError (an OSError, ``errno`` EACCES, ``filename`` the path), as ``open``
    raises: ``except OSError`` catches it as it catches a missing file."""

    _errno = errno.EACCES


def _script_level():
    """The stacklevel of warnings.warn, called where this is, that points at the script's line: the first frame
    outside this package."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == __file__:
        level, frame = level + 1, frame.f_back
    return level


def _comm_handle(comm):
    """The MPI_Comm of an mpi4py communicator as an integer (None: this process alone), checked:
    an mpi4py intracommunicator of the MPI library this nbody was built with."""
    if comm is None:
        return None
    if not _nbody.mpi_built():
        raise ValueError("comm: this nbody was built without MPI; install libopenmpi-dev and rebuild, "
                         "or leave comm out")
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise TypeError(f"comm: expected an mpi4py communicator, and mpi4py cannot be imported ({e})") from None
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError(f"comm: expected an mpi4py intracommunicator such as MPI.COMM_WORLD, got "
                        f"{type(comm).__name__}")
    if comm == MPI.COMM_NULL:
        raise ValueError("comm: MPI.COMM_NULL; give the communicator whose ranks share the simulation")
    # A handle means something only to the library that made it.
    theirs = MPI.Get_library_version().strip("\0 \n")
    ours = _nbody.mpi_library_version().strip("\0 \n")
    if theirs != ours:
        raise ValueError(f"comm: mpi4py runs on another MPI library ({theirs.splitlines()[0]}) than this nbody "
                         f"({ours.splitlines()[0]}); use an mpi4py built for nbody's MPI (Debian: python3-mpi4py)")
    handle = getattr(comm, "handle", None)  # mpi4py 4; 3.x has MPI._handleof
    return int(handle if handle is not None else MPI._handleof(comm))


def _exact_finish(value):
    """REBOUND's exact_finish_time: True or False (NumPy's too), or its 1 or 0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise ValueError(f"exact_finish_time={_shown(value)}: give True or False (REBOUND's 1 or 0)")


# The largest integers float64 holds exactly, every one below them too.
_EXACT_INTEGER = 2**53


def _float_array(value, name, columns):
    """``value`` as a C-contiguous float64 array of shape (N, columns) (or (N,) when columns is
    None), checked: float64 or float32 of either byte order, or integers within 2**53 (each exact
    in float64: ``[1, 1]`` as typed), at least one row, every value finite."""
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{name}: expected a float64 or float32 array, or integers; got {type(value).__name__}")
    if np.ma.isMaskedArray(value) and np.ma.getmaskarray(value).any():
        row = int(np.argwhere(np.ma.getmaskarray(value))[0][0])
        masked = int(np.ma.count_masked(value))
        noun = "value" if masked == 1 else "values"
        raise ValueError(f"{name}: a masked array with {masked} masked {noun} (the first in body {row}); nbody "
                         f"would read the values under the mask: drop those bodies, or fill them")
    try:
        array = np.asarray(value)
    except ValueError as e:  # ragged rows: numpy's words alone would not say which argument
        raise ValueError(f"{name}: not an array of numbers ({e})") from None
    # dtype.kind and itemsize, not dtype equality: '>f8' (FITS, some HDF5) is float64 too, and is not np.float64.
    if not ((array.dtype.kind == "f" and array.dtype.itemsize in (4, 8)) or array.dtype.kind in "iu"):
        raise TypeError(f"{name}: expected a float64 or float32 array, or integers; got dtype {array.dtype}")
    expected = "(N, 3)" if columns else "(N,)"
    if (columns and (array.ndim != 2 or array.shape[1] != columns)) or (not columns and array.ndim != 1):
        raise ValueError(f"{name}: shape {array.shape}; expected {expected}")
    if array.dtype.kind in "iu":  # (after the shape: a row names the body)
        inexact = (array > _EXACT_INTEGER) | (array < -_EXACT_INTEGER)
        if inexact.any():
            row = int(np.argwhere(inexact)[0][0])
            raise ValueError(f"{name}: body {row} has the integer {array[inexact].flat[0]}, which float64 cannot hold "
                             f"exactly; integers must be within 2**53 ({_EXACT_INTEGER}), or give floats")
    if array.shape[0] == 0:
        raise ValueError(f"{name}: no bodies; give at least 1")
    bad = ~np.isfinite(array)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f"{name}: body {row} has a value that is not finite ({array[row]})")
    return np.ascontiguousarray(array, dtype=np.float64)


def _masses(value, name="masses"):
    masses = _float_array(value, name, None)
    if not (masses >= 0).all():
        row = int(np.argmax(~(masses >= 0)))
        raise ValueError(f"{name}: body {row} has mass {masses[row]}; masses must not be negative (0: a test "
                         f"particle, which feels the others and pulls on none)")
    return masses


def _scalar(value):
    """A NumPy 0-d array (``np.array(3)``, what ``a.sum()`` of some array types gives) as the number it holds."""
    return value.item() if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _shown(value):
    """A value as a message quotes it: a NumPy scalar as the Python number it holds (NumPy 2 writes np.float64(0.1),
    and a loop over np.arange gives those)."""
    if isinstance(value, (np.generic, np.ndarray)) and np.ndim(value) == 0:
        value = value.item()
    return repr(value)


def _whole(value, name, low, high):
    value = _scalar(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected a whole number, got {_shown(value)} ({type(value).__name__})")
    if not low <= value <= high:
        raise ValueError(f"{name}={value}: must be a whole number from {low} to {high}")
    return int(value)


_MAX_STEPS = 10**15  # core/bounds.h kMaxSteps


_START_KEYWORDS = _nbody.START_KEYWORDS  # where a simulation starts: Simulation() only


# Other programs' and the command line's words for a setting (REBOUND's eps, --bodies): what a script writes first.
_ALIASES = {"eps": "softening", "epsilon": "softening", "softening_length": "softening", "timestep": "dt",
            "time_step": "dt", "bodies": "n", "nbodies": "n", "n_bodies": "n", "num_bodies": "n", "tmax": "t_end",
            "t_max": "t_end", "tend": "t_end", "dtmax": "dt_max", "etastart": "eta_start"}


def _meant(name, candidates, cutoff, words=True):
    """The one of ``candidates`` that ``name`` most likely meant, or None: with ``words``, the same name in other
    capitals (Dt) or one of _ALIASES (None where the alias's setting is not among them: a spelling close to another
    would mislead); else a close spelling."""
    if words:
        folded = [c for c in candidates if c.lower() == name.lower()]
        if folded:
            return folded[0]
        if name.lower() in _ALIASES:
            return _ALIASES[name.lower()] if _ALIASES[name.lower()] in candidates else None
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return close[0] if close else None


def _refuse_misspelt(function, misspelt, settings=False):
    """A misspelt keyword (``run(t_emd=1.0)``) is refused as Python refuses it, naming the keyword meant, or the
    ones there are: the settings and outputs are many, and Python's own message names neither. ``settings``: the
    function takes the simulation's settings as ``**settings`` too (the library's list of them)."""
    parameters = inspect.signature(function).parameters
    accepted = [name for name, p in parameters.items()
                if name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if settings:  # the arguments given by position (a path, the arrays) are not what a misspelt keyword meant
        accepted = [name for name in accepted if parameters[name].kind == parameters[name].KEYWORD_ONLY]
        accepted += [name for name in _nbody.SETTING_KEYWORDS if name not in accepted]
    name = next(iter(misspelt))
    meant = _meant(name, accepted, 0.6)
    hint = f"did you mean '{meant}'?" if meant else "it takes " + ", ".join(accepted)
    # run(eps=...): another program's word for a setting given where it is not taken; Simulation(tmax=...).
    alias = _ALIASES.get(name.lower()) if meant is None else None
    key, prefix = (alias, f"did you mean '{alias}'? ") if alias else (name, "")
    if alias == "t_end":
        hint = "did you mean 't_end'? the time to run to is run()'s t_end (integrate's first argument)"
    if function is not Simulation.__init__ and key in inspect.signature(Simulation.__init__).parameters:
        if key in _START_KEYWORDS + ("comm",):  # run(n=...)
            hint = f"{prefix}{key} is where a simulation starts: give it to nbody.Simulation"
        else:  # run(precision=...)
            settable = getattr(getattr(Simulation, key, None), "fset", None) is not None
            hint = (f"{prefix}{key} is a setting of the simulation: " + (f"sim.{key} = ... or " if settable else "") +
                    f"sim.configure({key}=...) before the run")
    raise TypeError(f"{function.__qualname__}() got an unexpected keyword argument '{name}'; {hint}")


def _checked_settings(settings, function):
    """The settings given to ``function`` as its ``**settings``, a misspelt one refused naming the one meant (a start
    keyword passes: the library says why it cannot be given there)."""
    misspelt = {key: value for key, value in settings.items()
                if key not in _nbody.SETTING_KEYWORDS and key not in _START_KEYWORDS}
    if misspelt:
        _refuse_misspelt(function, misspelt, settings=True)
    return dict(settings)


def _keywords_checked(function):
    """_refuse_misspelt for a function without ``**misspelt`` of its own. It adds a frame: run and integrate, whose
    warnings name the script's line two frames up, take ``**misspelt`` themselves instead (typed NoReturn, so that a
    type checker still refuses an unknown keyword)."""

    parameters = inspect.signature(function).parameters

    @functools.wraps(function)
    def checked(*args, **kwargs):
        misspelt = {k: v for k, v in kwargs.items() if k not in parameters}
        if misspelt:
            _refuse_misspelt(function, misspelt)
        return function(*args, **kwargs)

    return checked


class _Closed:
    """A closed Simulation's engine: every use says so."""

    def __getattr__(self, name):
        raise RuntimeError("this Simulation was closed (close(), or the end of its with block); make another, or "
                           "restart one from its checkpoint")


class Simulation:
    """One N-body simulation, on the CPU or on one or more GPUs.

    Arguments have the command line's names (``--bodies`` is ``n``, ``--threads`` is ``threads``,
    ``--block-size`` is ``block_size``), meanings, defaults and checks, with two defaults of
    Python's own: ``n`` 4096 (the command line: 16384) and ``precision`` "fp64" (the command line:
    fp32), so that the arrays a script reads are the engine's own fp64 state.

    scenario: "plummer", "random-sphere", "disk", "collision" or "two-body" (``names("scenario")``).
    n: bodies (None: 4096; two-body has 2). seed: the scenario's random seed (None: 42; two-body draws
    nothing and takes none).
    integrator: "leapfrog", "omelyan4", "yoshida4", "euler-damped" or "hermite4" (fourth-order Hermite
    with individual block time steps: a step is a block step; see eta, eta_start and dt_max below).
    dt: time step (None: the integrator's default, 0.01; 0.016 for euler-damped).
    softening: Plummer softening length (None: the scenario's, 0.01; 0.05 for disk and collision).
    precision: "fp32" or "fp64". backend: "auto" (GPUs if visible, else the CPU), "cuda" or "cpu".
    numgpus: devices to use (GPUs; with backend="cpu", host devices); None: every GPU, or one host
    device. gpus: explicit GPU ordinals, e.g. [0, 2]. threading: "single" or "workers".
    launch: "stream" or "graph". Keyword-only: eccentricity (two-body only; None: 0.5), damping (euler-damped; None: 0.995),
    exchange, kernel, block_size, fp64_rsqrt, weights, threads (the command line's options);
    mass_unit and length_unit (e.g. "1e5Msun", "1pc": what the checkpoints and snapshots call one
    unit, as --mass-unit and --length-unit; both or neither; the run stays in G = 1 units);
    hermite4's eta (0.02), eta_start (0.01) and dt_max (1/16), as --eta, --eta-start, --dt-max;
    softening 0 is allowed with hermite4 only (no regularisation). With units, dt and dt_max may be
    text with a time unit ("1kyr"; Gyr, Myr, kyr, yr, d, s), here and wherever they are set.

    Other ways to make one: ``Simulation.from_arrays``, ``Simulation.load`` (tipsy) and
    ``Simulation.restart`` (a checkpoint, continued bit for bit).

    comm (keyword-only, here and in the other constructors): an mpi4py communicator, e.g.
    ``MPI.COMM_WORLD``, whose ranks share the one simulation as under ``mpirun nbody`` (each its
    own devices), bit for bit the results of one process. Every rank then makes the simulation with
    the same arguments and makes every call that steps, reads or writes it, in the same order;
    rank 0 writes the files. None: this process alone.
    """

    @_keywords_checked
    def __init__(self, scenario="plummer", n=None, seed=None, integrator="leapfrog", dt=None, softening=None,
                 precision="fp64", backend="auto", numgpus=None, gpus=None, threading="single", launch="stream",
                 *, eccentricity=None, damping=None, exchange="auto", kernel=None, block_size=None,
                 fp64_rsqrt="series", weights=None, threads=None, mass_unit=None, length_unit=None, eta=None,
                 eta_start=None, dt_max=None, comm=None):
        if n is None:
            n = 2 if scenario == "two-body" else DEFAULT_BODIES
        options = dict(scenario=scenario, n=n, seed=seed, integrator=integrator, dt=dt, softening=softening,
                       precision=precision, backend=backend, numgpus=numgpus, gpus=gpus, threading=threading,
                       launch=launch, eccentricity=eccentricity, damping=damping, exchange=exchange, kernel=kernel,
                       block_size=block_size, fp64_rsqrt=fp64_rsqrt, weights=weights, threads=threads,
                       mass_unit=mass_unit, length_unit=length_unit, eta=eta, eta_start=eta_start, dt_max=dt_max)
        self._adopt(_nbody.Engine.create(options, _comm_handle(comm)))

    @classmethod
    def from_arrays(cls, positions, velocities, masses, *, time=0.0, softening=0.01, **settings):
        """A simulation of the bodies given as NumPy arrays, at step 0 of ``time`` (a time a run can have: within
        [-1e27, 1e27], as a file's time must be; a number in the simulation's units, or text with a unit, "1Myr", in
        the units ``mass_unit`` and ``length_unit`` give, as ``dt``).

        positions, velocities: (N, 3) arrays; masses: (N,); float64 or float32 (float32 values are
        widened exactly). They are in the simulation's units, where G = 1: with ``mass_unit="1Msun"`` and
        ``length_unit="1pc"``, masses in Msun and positions in pc, but velocities in the unit of length over the
        unit of time, sqrt(G M / L) (0.0656 km/s for those two; ``sim.units["velocity_km_s"]`` gives it), not km/s:
        divide km/s by it. Every value must be finite and no mass negative (0 is a test particle): otherwise a
        ``ValueError`` (a ``TypeError`` for another dtype) names the argument and the first bad body.
        The arrays are copied. ``settings`` are Simulation's (integrator, dt, precision, backend,
        numgpus, ...; not scenario, n or seed); softening defaults to 0.01 as for a snapshot.
        """
        positions = _float_array(positions, "positions", 3)
        velocities = _float_array(velocities, "velocities", 3)
        masses = _masses(masses)
        for name, array in (("velocities", velocities), ("masses", masses)):
            if array.shape[0] != positions.shape[0]:
                raise ValueError(f"{name}: {array.shape[0]} bodies, positions has {positions.shape[0]}; "
                                 "give one row per body in each")
        time = _scalar(time)
        if isinstance(time, str):
            pass  # a time with a unit ("1Myr"), in the units mass_unit and length_unit give
        elif isinstance(time, bool) or not isinstance(time, numbers.Real):
            raise TypeError(f"time: expected a number or text with a unit, got {_shown(time)} ({type(time).__name__})")
        else:
            time = float(time)
        comm = _comm_handle(settings.pop("comm", None))
        settings = cls._settings(settings, Simulation.from_arrays)
        settings["softening"] = softening
        self = cls.__new__(cls)
        self._adopt(_nbody.Engine.from_arrays(positions, velocities, masses, time, settings, comm))
        return self

    @classmethod
    def load(cls, path, **settings):
        """A simulation of the bodies of a tipsy snapshot (standard or little-endian; float32 values,
        no run settings), of one of nbody's HDF5 snapshots (``snapshots=``; its precision's values,
        its time, its units) or of another program's initial conditions in the GADGET/SWIFT HDF5 layout
        (its units, where it states them, converted to G = 1: docs/guide.md, Units): ``nbody --load PATH``,
        a new run from step 0. ``settings`` as in
        ``from_arrays``; the softening defaults to the file's. A missing file raises
        ``MissingFileError`` (a ValueError and a FileNotFoundError), one it may not read ``UnreadableFileError`` (a
        ValueError and a PermissionError)."""
        comm = _comm_handle(settings.pop("comm", None))
        self = cls.__new__(cls)
        path = cls._path(path, "path")
        settings = cls._settings(settings, Simulation.load)
        self._adopt(cls._reading(path, lambda: _nbody.Engine.load(path, settings, comm)))
        self._engine.warn_of_setup(2)  # units named over the file's own: its numbers read in them (rank 0)
        return self

    @classmethod
    def restart(cls, path, **overrides):
        """The run a checkpoint holds, continued bit for bit: bodies, step, time, energy baseline and
        every setting (``nbody --restart PATH``). A setting named in ``overrides`` (dt, softening,
        integrator, precision, devices...) replaces the file's, with a notice; a new dt goes on from
        the time reached. A missing file raises ``MissingFileError`` (a ValueError and a FileNotFoundError), one it
        may not read ``UnreadableFileError`` (a ValueError and a PermissionError)."""
        comm = _comm_handle(overrides.pop("comm", None))
        self = cls.__new__(cls)
        path = cls._path(path, "path")
        overrides = cls._settings(overrides, Simulation.restart)
        self._adopt(cls._reading(path, lambda: _nbody.Engine.restart(path, overrides, comm)))
        self._engine.warn_of_setup(2)  # other units than the file's: the whole run read anew (rank 0)
        return self

    @staticmethod
    def _settings(settings, function):
        """The settings of a simulation whose bodies come from elsewhere (``function``: from_arrays, load or
        restart), checked."""
        for key in _START_KEYWORDS:
            if key in settings:
                raise TypeError(f"'{key}' chooses a scenario; the bodies come from elsewhere here")
        return _checked_settings(settings, function)

    def _time(self, value, name):
        """A time as given: a number in the simulation's units (a NumPy 0-d array too), or text with a physical unit
        ("10Myr", "2.5kyr"; Gyr, Myr, kyr, yr, d, s) where the simulation has units (``configure(mass_unit=...,
        length_unit=...)``, or its file's), in them."""
        if isinstance(value, str):
            return self._engine.time_in_units(value, name)
        return _scalar(value)

    @staticmethod
    def _path(path, name):
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"{name}: expected a path, got {type(path).__name__}")
        path = os.fsdecode(path)  # bytes as the file system encodes names (os.fsencode's inverse)
        if not path:
            raise ValueError(f"{name} '': the path is empty; name a file")
        # The C library ends a name at a NUL: "run\0junk.h5" would write "run", past the check of its extension.
        if "\0" in path:
            raise ValueError(f"{name} {path!r}: embedded null byte; a file name cannot hold one")
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:  # bytes the file system encoding could not decode (kept as surrogates)
            raise ValueError(f"{name} {path!r}: not a UTF-8 name; nbody takes file names in UTF-8") from None
        return path

    @staticmethod
    def _reading(path, read):
        """``read()`` of the file ``path``, a missing file raised as MissingFileError (also a FileNotFoundError), one it
        may not read as UnreadableFileError (also a PermissionError), known
        from the library's message: a check here before it would be this rank's alone with ``comm``."""
        try:
            return read()
        except ValueError as e:
            for kind in (MissingFileError, UnreadableFileError):
                reason = os.strerror(kind._errno)
                if f"{path}: cannot open: {reason}" in str(e) or f"{path}: cannot read: {reason}" in str(e):
                    raise kind(str(e), path) from None
            raise

    def _adopt(self, engine):
        self._engine = engine
        object.__setattr__(self, "notices", [])
        self._take_notices()

    def _take_notices(self):
        """Moves the engine's new notices into ``self.notices`` (and the log, at INFO); returns them."""
        new = self._engine.take_notices()
        for notice in new:
            _log.info("%s", notice)
            self.notices.append(notice)
        return new

    # Running.

    def step(self, k=1):
        """Advances ``k`` steps (GIL released while the engine works). Ctrl-C raises
        KeyboardInterrupt after the step in progress; the steps done until then are kept.

        On a GPU the steps are enqueued and the last of them may still run when ``step`` returns:
        a loop of ``step()`` calls keeps the GPU busy with no wait per call. Every read of the state
        (positions, energy, diagnostics, checkpoint...) waits for them; ``synchronize()`` waits
        alone. A failure in such a step is raised by the next call that waits or steps."""
        if k.__class__ is int and 0 <= k <= _MAX_STEPS:  # the common call, checked at no cost
            self._engine.advance(k)
        else:
            self._engine.advance(_whole(k, "k", 0, _MAX_STEPS))

    def synchronize(self):
        """Waits for the steps enqueued so far (on the CPU they are done when ``step`` returns)."""
        self._engine.synchronize()

    def benchmark(self, steps=None, warmup=2):
        """Times ``steps`` steps after ``warmup`` untimed ones as ``nbody --benchmark`` does (by default as many as
        it: 10 steps, or 1,000 block steps with ``integrator="hermite4"``), and
        returns its ``--json`` report as a dict with the same keys (median_step_ms,
        wall_mean_step_ms, interactions_per_second, gflops, description...). It runs on a copy of
        the current state with the current settings: this simulation is neither advanced nor
        changed (a GPU holds both while it runs). With ``integrator="hermite4"`` the steps are
        block steps, timed as one run, and the report's ``hermite4`` entry has block steps/s,
        the mean active bodies a block and force+jerk interactions/s; the copy goes on from every
        body's own time and step, as this simulation would (and as ``nbody --benchmark
        --restart`` of its checkpoint does: the same ``state_hash``). Ctrl-C raises
        KeyboardInterrupt."""
        if steps is None:
            steps = 1000 if self.integrator == "hermite4" else 10
        return self._engine.benchmark(_whole(steps, "steps", 1, _MAX_STEPS), _whole(warmup, "warmup", 0, _MAX_STEPS))

    def run(self, steps=None, t_end=None, callback=None, every=1, *, diagnostics=None, diagnostics_every=None,
            diagnostics_dt=None,
            checkpoint=None, checkpoint_every=None, checkpoint_dt=None, snapshots=None, snapshot_every=None,
            snapshot_dt=None, snapshot_precision=None, save=None, **misspelt: typing.NoReturn):
        """Advances ``steps`` steps, or until the time reaches ``t_end`` (the first step at or past
        it; with ``integrator="hermite4"``, ``t_end`` itself: the bodies not at a block time there are
        brought to it by a last step of their own); give one of the two. A simulation from
        ``restart`` may give neither before it steps: it goes on to where the run its checkpoint continues was going
        (its ``t_end``, or its last step), with a notice, as ``nbody --restart`` does: no steps where that run
        reached its end. ``t_end`` and the series' times (``diagnostics_dt``, ...) may be text in a physical unit
        where the simulation has units: ``t_end="10Myr"`` (Gyr, Myr, kyr, yr, d, s). ``callback(sim)`` is
        called after every ``every`` steps of this run (it may read the simulation, not step or
        change it); when it returns a true value the run stops there. Returns the number of steps
        done; ``sim.last_run`` holds what the run did, also when it ends with an exception.

        It is the loop of ``nbody --run``, with its outputs, each written whole or not at all:
        ``diagnostics`` (a .csv or .jsonl series, every ``diagnostics_every`` steps, default 100, or
        at every multiple of the time ``diagnostics_dt``: the first step or block time at or past it),
        ``checkpoint`` (the final state; with ``checkpoint_every`` or at every multiple of the time
        ``checkpoint_dt``, also a series named after the step), ``snapshots`` (a base name: HDF5 snapshots at the start, the end and every
        ``snapshot_every`` steps or at every multiple of the time ``snapshot_dt``, ``snapshot_precision`` "fp32" or
        "fp64"; by default fp32, fp64 with hermite4), ``save`` (the final state, as ``save()`` writes it: an HDF5 snapshot in fp64 where the name ends in
        .h5 or .hdf5, else tipsy). A series named with no cadence of its own is written at the cadence of the run
        this one continues (the checkpoint's after ``restart``, else the last run's; ``checkpoint_every=0`` or
        ``snapshot_every=0``: none between the start and the end).
        Ctrl-C stops the run within about 0.2 s and a step, writes those outputs, and raises
        KeyboardInterrupt with the state intact; so does an exception in the callback. A run stopped that way
        leaves its state to ``checkpoint`` where it has one, not to the snapshot series, and the next run (of the
        script, or ``restart``) writes its start only where a snapshot falls due, where the series is new to the
        folder, or where its course begins (other bodies, ``configure``): the files are those of one run never
        stopped."""
        if misspelt:
            _refuse_misspelt(Simulation.run, misspelt)
        return self._run(steps, t_end, callback, every, True, diagnostics=diagnostics,
                         diagnostics_every=diagnostics_every, diagnostics_dt=diagnostics_dt, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every, checkpoint_dt=checkpoint_dt, snapshots=snapshots,
                         snapshot_every=snapshot_every, snapshot_dt=snapshot_dt,
                         snapshot_precision=snapshot_precision, save=save)

    def _run(self, steps, t_end, callback, every, exact_finish_time, *, diagnostics=None, diagnostics_every=None,
             diagnostics_dt=None, checkpoint=None, checkpoint_every=None, checkpoint_dt=None, snapshots=None,
             snapshot_every=None, snapshot_dt=None, snapshot_precision=None, save=None):
        # run(), and integrate() with its exact_finish_time: hermite4 ends at t_end exactly (every body brought to it)
        # where that is true, else at the last block time at or before it. (integrate writes no outputs, so no
        # checkpoint records an end that a restart would finish at.)
        if steps is None and t_end is None:
            # A restarted simulation goes on to the end of the run its checkpoint continues, as nbody --restart does.
            end = self._engine.continued_end()
            if end is None or end[:2] == (None, None):
                raise TypeError("run: give steps or t_end (one of them)" + (f"; {end[2]}" if end else ""))
            t_end, steps, _ = end
        if steps is not None and t_end is not None:
            raise ValueError(f"run: steps={_shown(steps)} and t_end={_shown(t_end)}: give one of them, not both")
        # How messages name t_end: as typed where it is text with a unit, not as the number it is in the run's units.
        t_end_typed = t_end if isinstance(t_end, str) else ""
        t_end = self._time(t_end, "t_end")
        if steps is not None:
            total = _whole(steps, "steps", 0, _MAX_STEPS)
        elif isinstance(t_end, bool) or not isinstance(t_end, numbers.Real):
            raise TypeError(f"t_end: expected a time, got {_shown(t_end)} ({type(t_end).__name__})")
        elif not math.isfinite(t_end):
            raise ValueError(f"t_end={_shown(t_end)}: must be a finite time")
        every = _whole(every, "every", 1, _MAX_STEPS)
        if callback is not None and not callable(callback):
            raise TypeError(f"callback: expected a callable, got {type(callback).__name__}")
        outputs = dict(diagnostics=diagnostics, checkpoint=checkpoint, snapshots=snapshots, save=save,
                       snapshot_precision=snapshot_precision)
        for name, value in (("diagnostics", diagnostics), ("checkpoint", checkpoint), ("snapshots", snapshots),
                            ("save", save)):
            if value is not None:
                outputs[name] = self._path(value, name)
        # 0 checkpoints or snapshots between the start and the end: none (also where the run before wrote some).
        for name, value, least in (("diagnostics_every", diagnostics_every, 1), ("checkpoint_every", checkpoint_every, 0),
                                   ("snapshot_every", snapshot_every, 0)):
            outputs[name] = None if value is None else _whole(value, name, least, _MAX_STEPS)
        typed = {}  # the times given with a unit, which messages quote as typed
        for name, value in (("diagnostics_dt", diagnostics_dt), ("checkpoint_dt", checkpoint_dt),
                            ("snapshot_dt", snapshot_dt)):
            given, value = value, self._time(value, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name}: expected a time, got {_shown(value)} ({type(value).__name__})")
            if not (math.isfinite(value) and 0 < value <= 1e27):  # (one given in a unit: checked as it was taken)
                raise ValueError(f"{name}={_shown(value)}: must be a time in (0, 1e+27]")
            outputs[name] = float(value)
            if isinstance(given, str):
                typed[name] = given
        outputs["typed"] = typed
        # The run's warnings point at the script's line: the first frame outside this package, counted from this one
        # (which calls the engine).
        level, frame = 1, sys._getframe(0)
        while frame is not None and frame.f_code.co_filename == __file__:
            level, frame = level + 1, frame.f_back
        outputs["warn_level"] = level
        if t_end is not None:
            outputs["end_time"] = float(t_end)  # recorded in the run's checkpoints, for a restart to go on to
        first_notice = len(self.notices)
        short = []  # notices that the time reached is not t_end, warned of once the run has returned
        if t_end is not None:  # last: hermite4's time limit, set here, is cleared by the run that follows
            total = self._engine.steps_to(float(t_end), t_end_typed, exact_finish_time)
            # A time already passed (not one the run is at: the time reached is the one asked for).
            short = [n for n in self._take_notices() if n.startswith("t_end=") and self.time > t_end]
        previous = self._engine.last_run  # a call refused before it begins leaves it: not this run's outcome
        object.__setattr__(self, "_running", True)  # close() from the run's own callback is refused
        try:
            result = self._engine.run(total, callback, every, self, outputs)
        except BaseException as stopped:
            try:
                self._take_notices()
            except RuntimeError:  # busy in another thread: the notices stay for the next call
                pass
            self._note_run_notices(first_notice)
            if self._engine.last_run is not previous:
                self._say_lost_outputs(stopped)
            raise
        finally:
            object.__setattr__(self, "_running", False)
        self._take_notices()
        if t_end is not None and not result["stopped_by_callback"]:
            self._engine.note_end(float(t_end), t_end_typed)
            ended = [n for n in self._take_notices() if n.startswith("t_end=")]  # hermite4: short of t_end
            if exact_finish_time:  # (not where the script asked for whole steps: a notice only)
                short += ended
        self._note_run_notices(first_notice)
        # (A diagnostics file or another run's checkpoint the run replaces is a RuntimeWarning as the run begins.)
        self._warn_of_end(short)
        if result["outputs_not_written"]:
            lost = result["outputs_not_written"]
            raise OutputNotWrittenError(
                "; ".join(f"{d['output']} not written: {d['error']}" for d in lost) +
                f" (the run's {result['steps']} steps are done, and the simulation holds their state: checkpoint() "
                "or save() writes it elsewhere)", lost)
        return result["steps"]

    def _say_lost_outputs(self, stopped):
        # A run stopped by Ctrl-C or a callback's exception still writes its outputs; one it could not write (a full
        # disk) or kept (a checkpoint that holds a later step) is said on the exception (a note in its traceback) and
        # as a RuntimeWarning, not only in last_run: a script's `except KeyboardInterrupt` must not take the
        # checkpoint for written. (A filter that makes the warning an error leaves the exception as it was.)
        outcome = self._engine.last_run
        lost = outcome.get("outputs_not_written") if isinstance(outcome, dict) else None
        if not lost:
            return
        text = "; ".join(f"{d['output']} not written: {d['error']}" for d in lost)
        if hasattr(stopped, "add_note"):  # Python 3.11
            stopped.add_note(text)
        try:
            warnings.warn(f"the run stopped ({type(stopped).__name__}); {text}", RuntimeWarning,
                          stacklevel=_script_level())
        except Warning:
            pass

    @staticmethod
    def _warn_of_end(notices):
        # A run that did not reach the time asked for (it was already past it, or a fixed step ended past it)
        # says so as a RuntimeWarning at the script's line, as the command line prints it. With
        # comm, on every rank (each has the same notices): a filter that makes it an error then raises on every rank
        # alike, none going on alone to a collective call.
        depth = _script_level()
        for notice in notices:
            warnings.warn(notice, RuntimeWarning, stacklevel=depth)

    def _note_run_notices(self, first):
        # The run's own notices in last_run (the run's outcome; None where it was refused before it began).
        outcome = self._engine.last_run
        if outcome is not None:
            outcome["notices"] = self.notices[first:]

    @property
    def last_run(self):
        """What the last ``run`` did, a dict: steps, wall_seconds, stopped_by_callback, interrupted
        (stopped before its end by a signal: Ctrl-C, or one a job script made a KeyboardInterrupt; as
        ``nbody --run --json`` says), diagnostics_samples, checkpoints_written and _not_written (the series of checkpoint_every or
        checkpoint_dt;
        the final ``checkpoint`` file is ``checkpoint``), snapshots_written and _not_written,
        outputs_not_written (the final checkpoint or save file that could not be written, each a
        dict of output, path and error, then raised as ``OutputNotWrittenError``; the others were written),
        diagnostics_failure (why the series stopped early; else None) and diagnostics_rows_in (then the file
        its rows are in, the partial file, or None where they are in none), diagnostics_replaced (the warning, where the run takes up an earlier one and
        replaces its series at the ``diagnostics`` path whole; else None), checkpoint_replaced (the
        warning, where the ``checkpoint`` path holds another run's checkpoint, which the run replaces; else
        None), failure, saved_step and
        save_failure (a run that could not go on),
        warnings (each RuntimeWarning the run gave) and energy_warning (with ``diagnostics``: the end's
        energy error says the run did not resolve its orbits; else None),
        checkpoint, and hermite4: None, or for hermite4 this run's figures as ``nbody --run --json``
        has them (block_steps, force_evaluations and _per_body, step_level_histogram, longest_step,
        interactions and interactions_per_second, eta, eta_start, dt_max, state_hash), counted from
        the run's first block step, and notices: this run's (``sim.notices`` keeps every one since
        the simulation was made). Kept when the run ends with an exception (a callback's, Ctrl-C, a
        failure); None before the first run."""
        return self._engine.last_run

    def integrate(self, t_end, callback=None, every=1, exact_finish_time=True, **misspelt: typing.NoReturn):
        """REBOUND's name: ``run(t_end=t_end, ...)``. hermite4 ends at ``t_end`` exactly, as REBOUND's
        (exact_finish_time=1) does: every body not at a block time there takes a last step of its own
        to it. Fixed steps are whole: they end at the first step at or past ``t_end`` (t_end=1.0 with
        dt=0.03: 1.02), which a notice in ``sim.notices`` and a RuntimeWarning say when the time
        reached is not ``t_end`` (not where the callback stopped it). ``exact_finish_time=False`` (or 0)
        asks for whole steps, as REBOUND's does: hermite4 then ends at the last block time at or before
        ``t_end`` (no last steps: a run split so has the bits of one straight through), and neither
        end is warned of (hermite4's notice of where it ended stays in ``sim.notices``)."""
        if misspelt:
            _refuse_misspelt(Simulation.integrate, misspelt)
        exact_finish_time = _exact_finish(exact_finish_time)
        given = t_end
        t_end = self._time(t_end, "t_end")
        steps = self._run(None, given, callback, every, exact_finish_time)
        # hermite4's end short of t_end, and a t_end already passed, were said by run; a fixed step's end past it is
        # said here, where a REBOUND user expects t_end itself.
        # (Not the rounding of time = t0 + steps x dt: integrate(0.3) with dt=0.1 ends at 0.30000000000000004, t_end.)
        ended_there = math.isclose(self.time, t_end, rel_tol=1e-12, abs_tol=1e-12 * self.dt) if self.dt else False
        if (steps and self.dt is not None and not ended_there and not self.last_run["stopped_by_callback"] and
                exact_finish_time):
            shown = given if isinstance(given, str) else t_end  # a time in a unit as typed
            notice = (f"t_end={_shown(shown)}: the run ended at {self._engine.time_text(self.time)}, the first step "
                      f"of dt={self._engine.time_text(self.dt)} at or past it (integrate takes whole steps; REBOUND's "
                      "ends at t_end exactly)")
            _log.info("%s", notice)
            self.notices.append(notice)
            self.last_run["notices"].append(notice)
            self._warn_of_end([notice])
        return steps

    # The state. positions, velocities and masses are read-only NumPy views of one host copy of
    # the state per step (downloaded from the devices at the first read after a step): reads at the
    # same step share that memory, no copy each. A view is never invalidated: it keeps the values
    # of its step after the simulation moves on (the next step's copy goes to new memory while an
    # old array is alive). Writing into one is refused; assign a whole array to change the state,
    # or edit np.array(sim.positions), a copy of your own.

    @property
    def positions(self):
        """(N, 3) float64 positions at the current step: a read-only view, no copy (rows 32 bytes
        apart: ``np.ascontiguousarray`` makes a packed copy). It keeps this step's values after
        later steps. Assign an (N, 3) array to move the bodies."""
        return self._engine.positions()

    @property
    def device_positions(self):
        """The engine's own positions on its GPU, without a copy, as a ``DeviceView`` with
        ``__cuda_array_interface__`` (version 3) and DLPack (``__dlpack__``): ``cupy.asarray(v)``,
        ``torch.from_dlpack(v)``. (N, 3) in the run's precision (float32 or float64), read-only,
        rows 4 values apart. Valid until the next step or change: the next step overwrites that
        memory, a change of settings or bodies frees it; take it again after each step. Only for a
        CUDA run on one GPU (``numgpus=1``) in one process, not hermite4 (which keeps no position array on
        the device: read ``positions``): otherwise ``ValueError``."""
        return DeviceView(self, *self._engine.device_positions())

    @positions.setter
    def positions(self, value):
        self._engine.set_bodies(self._rows(value, "positions", 3), None, None)

    @property
    def velocities(self):
        """(N, 3) float64 velocities at the current step: a read-only view, no copy, that keeps this
        step's values after later steps, as ``positions``, but packed (rows 24 bytes apart). Assign
        an (N, 3) array to change them: ``sim.velocities = 0.9 * sim.velocities`` (in place,
        ``sim.velocities *= 0.9`` is refused as a read-only array's)."""
        return self._engine.velocities()

    @velocities.setter
    def velocities(self, value):
        self._engine.set_bodies(None, self._rows(value, "velocities", 3), None)

    @property
    def masses(self):
        """(N,) float64 masses: a read-only view, as ``positions``: the fourth column of its (x, y, z, m)
        rows (4 values apart, strides (32,)). Assign an (N,) array of masses (0 or more) to change them."""
        return self._engine.masses()

    @masses.setter
    def masses(self, value):
        masses = _masses(value)
        self._check_count(masses, "masses")
        self._engine.set_bodies(None, None, masses)
        self._take_notices()  # every mass 0, where it is

    @property
    def ids(self):
        """(N,) uint64 body identities: the index, as checkpoints store it (bodies never reorder)."""
        return np.arange(self.n, dtype=np.uint64)

    @property
    def types(self):
        """(N,) uint8 particle families, as tipsy's: 0 gas, 1 dark matter, 2 star (a copy)."""
        return self._engine.types()

    @property
    def time_steps(self):
        """(N,) float64 time step of each body (a copy): with ``integrator="hermite4"`` its own block step, a
        power of two of at most ``dt_max`` that the Aarseth criterion chose (the start criterion's before the
        first block step); with the other integrators ``dt``, every body's alike. In simulation time units."""
        return self._engine.time_steps()

    def _rows(self, value, name, columns):
        array = _float_array(value, name, columns)
        self._check_count(array, name)
        return array

    def _check_count(self, array, name):
        if array.shape[0] != self.n:
            raise ValueError(f"{name}: {array.shape[0]} rows for a simulation of {self.n} bodies")

    @property
    def n(self):
        """The number of bodies."""
        return self._engine.bodies

    def __len__(self):
        return self._engine.bodies

    @property
    def time(self):
        """Simulation time: the start's plus steps x dt (never a running sum); hermite4: the block
        time, where every body is predicted to. Not assigned: a run goes on from the time it reached."""
        return self._engine.time

    @time.setter
    def time(self, value):
        raise AttributeError("time is where the run has reached, not a setting (nothing was changed): "
                             "run(t_end=...) runs to a time, and Simulation.from_arrays(..., time=...) starts at one")

    time.fset.refuses = True  # a setter that only says why not: no name to suggest for a misspelt setting

    t = time  # REBOUND's name

    @property
    def steps(self):
        """Steps done since the run began (a restart's included)."""
        return self._engine.steps

    def energy(self):
        """Total energy, kinetic plus potential (an O(N^2) pass, like a force evaluation)."""
        return self._engine.energy()

    def diagnostics(self):
        """What the state says of the system, as the command line's --run reports it: a dict of
        time, step, kinetic, potential, total, initial_energy, relative_energy_error (|E - E0| / |E0 - Kb|,
        E0 at the start of the run, or when bodies were last assigned; Kb = |P|^2/2M, the bulk motion's kinetic
        energy: the error is over the energy in the centre-of-mass frame), momentum, angular_momentum
        (about the centre of mass), centre_of_mass, mass, virial_ratio (2K/|W|, K about the centre of mass), lagrangian_radii
        holding the lagrangian_fractions (0.1, 0.5, 0.9) of the mass."""
        return self._engine.diagnostics()

    # Settings: each assignment takes effect from the next step, the state and clock kept bit for
    # bit (a new dt goes on from the time reached). A refused one changes nothing.

    def configure(self, **settings):
        """Changes several settings at once: integrator, dt, damping, softening, precision, backend,
        numgpus, gpus, weights, threading, launch, exchange, kernel, block_size, fp64_rsqrt,
        threads, hermite4's eta, eta_start and dt_max, and mass_unit and length_unit (both or neither:
        what the files call one unit; the state's numbers stay as they are, in G = 1 units). With hermite4
        each body goes on from its own time and step, but where the softening changes (its accelerations
        and jerks were of the old potential) or no block step was made yet: every body then starts again,
        as a simulation made with the new settings would. A new softening also restarts the energy
        error's baseline (another potential)."""
        self._engine.configure(_checked_settings(settings, Simulation.configure))
        self._take_notices()

    def _refuse_none(self, name):
        # A keyword's None is "not given": the command line's default where a simulation is made, the file's in
        # restart, no change in configure. An assignment names a value: None would change nothing and look done.
        current = getattr(self, name)
        what = (f"a name ({', '.join(names(name))})" if isinstance(current, str) else
                "a whole number" if isinstance(current, int) else "a number")
        raise TypeError(f"{name}: expected {what}, got None (nothing was changed); None means the default only in "
                        "the arguments that make a simulation")

    def _setting(name, doc):
        def get(self):
            return getattr(self._engine, name)

        def put(self, value):
            if value is None:
                self._refuse_none(name)
            self.configure(**{name: value})

        return property(get, put, doc=doc)

    dt = _setting("dt", "The time step; None with hermite4 (each body its own, at most dt_max).")
    # hermite4's settings read back with another integrator too: what a change to hermite4 would take.
    eta = _setting("eta", "hermite4's accuracy parameter (Aarseth's criterion, inside the square root); with another "
                          "integrator, what hermite4 would take.")
    eta_start = _setting("eta_start", "hermite4's first steps: eta_start times the shorter of |a| / |jerk| and "
                                      "sqrt(|potential|) / |a| (with another integrator, what hermite4 would take).")
    dt_max = _setting("dt_max", "hermite4's dt_max as given (in the simulation's time unit): its steps are powers of "
                                "two, the longest the largest at most this (0.0625 for 0.1); with another integrator, "
                                "what hermite4 would take.")
    softening = _setting("softening", "The Plummer softening length.")
    integrator = _setting("integrator", "The integrator's name.")
    damping = _setting("damping", "euler-damped's velocity factor per step.")
    precision = _setting("precision", "fp32 or fp64.")
    threading = _setting("threading", "single (one host thread) or workers (one per device).")
    launch = _setting("launch", "stream or graph (CUDA graphs of 16 steps).")
    numgpus = property(lambda self: self._engine.device_count,
                       lambda self, value: self.configure(numgpus=value) if value is not None
                       else self._refuse_none("numgpus"),
                       doc="Devices the simulation is split over (GPUs, or host devices on the CPU).")
    del _setting

    def __setattr__(self, name, value):
        # A misspelt setting (sim.dtmax = 0.01) would otherwise be a new attribute that changes nothing, while
        # the run goes on with the old value: refused, naming the setting meant. Only the names of what can be
        # assigned (the settings and the state) are matched; other names are the script's own.
        cls = type(self)
        settable_here = isinstance(getattr(cls, name, None), property) and getattr(cls, name).fset is not None
        if not name.startswith("_") and not settable_here and name not in self.__dict__:
            # A setting that is no property (sim.kernel = ...) would be a new attribute that changes nothing.
            if name in _nbody.SETTING_KEYWORDS:
                raise AttributeError(f"{cls.__name__}.{name} cannot be assigned; give it to configure({name}=...) "
                                     "(nothing was changed)")
            if name in _START_KEYWORDS:
                raise AttributeError(f"{cls.__name__}.{name} is where a simulation starts; it cannot change while it "
                                     "runs (nothing was changed)")
        if not name.startswith("_") and not hasattr(cls, name) and name not in self.__dict__:
            settable = [n for n in dir(cls) if isinstance(getattr(cls, n, None), property) and getattr(cls, n).fset
                        and not getattr(getattr(cls, n).fset, "refuses", False)]
            # Other capitals and other programs' words (sim.Dt, sim.eps) on a Simulation itself; a subclass's own
            # attributes (its eps, say) are its own, and only close spellings of a setting are refused there.
            own = cls is Simulation
            meant = _meant(name, settable, 0.75, words=own)
            if meant == "dt" and self.integrator == "hermite4":  # (sim.Dt too: dt is refused there)
                raise AttributeError(f"{cls.__name__} has no '{name}'; hermite4 chooses each body's step: the "
                                     "longest is dt_max (sim.dt_max = ...), each body's own sim.time_steps (nothing "
                                     "was changed)")
            if meant:
                raise AttributeError(f"{cls.__name__} has no '{name}'; did you mean '{meant}'? (nothing was "
                                     "changed)")
            if own and _ALIASES.get(name.lower()) == "t_end":
                raise AttributeError(f"{cls.__name__} has no '{name}'; the time to run to is run()'s t_end "
                                     "(nothing was changed)")
        object.__setattr__(self, name, value)

    @property
    def backend(self):
        """cpu or cuda: where the simulation runs."""
        return self._engine.backend

    @property
    def kernel(self):
        """The force kernel (``names("kernel")``: the backend's default unless one was chosen); set with
        ``configure(kernel=...)``."""
        return self._engine.kernel

    @property
    def threads(self):
        """The CPU backend's OpenMP threads in all (shared among the devices' workers); None: every core. Set with
        ``configure(threads=...)``."""
        return self._engine.threads

    @property
    def description(self):
        """One line: backend, devices, kernel, precision, threading."""
        return self._engine.description

    @property
    def units(self):
        """What the files call one unit, as ``--json``'s ``units``: a dict of ``mass`` and ``length`` as given
        (``"1e5Msun"``, ``"1pc"``), ``mass_g``, ``length_cm``, and the ``time_s`` and ``velocity_km_s`` that
        follow (G = 1); None in N-body units. Set with ``configure(mass_unit=..., length_unit=...)``; a
        restart's come from its file."""
        return self._engine.units

    # Outputs: written whole or not at all.

    def save(self, path, format=None):
        """Writes the state, as ``nbody --save``: where path ends in .h5 or .hdf5, an HDF5 snapshot in
        fp64 (families, time, softening and units, as ``run(snapshots=...)`` writes, for yt, pynbody and
        h5py; ``Simulation.load`` reads it back); else a tipsy file (float32, no run settings), its format
        "standard" (big-endian, the default) or "little-endian", with the simulation's physical units, if
        any, beside it in path + ".param" for pynbody, yt and ``Simulation.load``. Tipsy groups the bodies by
        family (gas, dark matter, stars): where they were not, a notice says that the file's order is not
        the run's."""
        if format is not None and not isinstance(format, str):
            raise TypeError(f"format={format!r}: give a string, 'standard' or 'little-endian'")
        path = self._path(path, "path")
        self._warn_of_replaced(path, False)
        warned = self._engine.save(path, format or "")
        self._take_notices()  # the bodies grouped by family, where they were not; where the units are
        self._warn_of_end(warned)  # a parameter file its readers would take instead of the one with its units

    def checkpoint(self, path):
        """Writes an HDF5 checkpoint (GADGET/SWIFT layout, the run's precision, every setting):
        ``Simulation.restart`` or ``nbody --restart`` continue it bit for bit."""
        path = self._path(path, "path")
        self._warn_of_replaced(path, True)
        self._engine.checkpoint(path)

    def _warn_of_replaced(self, path, checkpoint):
        # A state its readers would miss (another run's checkpoint, a checkpoint under a snapshot, a series' file of
        # its step): a RuntimeWarning at the script's line before the write, as the command line warns at a run's
        # start, so that a filter that makes it an error leaves the file as it was.
        said = self._engine.replaced_state(path, checkpoint)
        if said:
            warnings.warn(said, RuntimeWarning, stacklevel=_script_level())

    # Its devices and memory, let go when the script says so.

    def close(self):
        """Lets the simulation's devices and memory go now (a GPU's, for another simulation or process), rather than
        when the last reference to it goes; also at the end of a ``with`` block. Arrays taken from it before
        (``positions``, ``device_positions()``) stay valid, and keep what they view until they go. Any later use of
        the simulation raises RuntimeError; closing it again does nothing. Its files are written whole already: a
        run's outputs at its end, ``save()`` and ``checkpoint()`` as they are called."""
        engine = self.__dict__.get("_engine")
        if engine is None or isinstance(engine, _Closed):
            return
        if self.__dict__.get("_running"):
            raise RuntimeError("close(): the simulation is running (a run() under way: this is its callback, or another "
                               "thread's); close it once the run returns (a callback that returns True stops it)")
        try:
            engine.time  # busy in another thread (a run): said, and left open
        except RuntimeError as e:
            raise RuntimeError(f"close(): {e}; close it once that call returns") from None
        object.__setattr__(self, "_engine", _Closed())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _refuse_copy(self, *protocol):
        # A copy would share the engine (stepping one moves the other); the engine's state lives in its devices and
        # the library, which pickle cannot reach. A checkpoint holds all of it, to be continued any number of times.
        raise TypeError("a Simulation cannot be copied or pickled; to branch a run, sim.checkpoint(path), then "
                        "nbody.Simulation.restart(path) once per branch (each continues it bit for bit)")

    __copy__ = __deepcopy__ = __reduce__ = __reduce_ex__ = __getstate__ = _refuse_copy

    def __repr__(self):
        # Shown in a notebook while another thread runs it: said, not raised (the engine cannot be read then).
        if getattr(self, "_engine", None) is None:
            return "<nbody.Simulation (not made)>"
        if isinstance(self._engine, _Closed):
            return "<nbody.Simulation (closed)>"
        try:
            self._engine.time
        except RuntimeError as e:
            return f"<nbody.Simulation ({e})>"
        step = f"dt={self.dt:g}" if self.dt is not None else f"eta={self.eta:g} dt_max={self.dt_max:g}"
        return (f"<nbody.Simulation n={self.n} t={self.time:g} steps={self.steps} {self.integrator} "
                f"{step} softening={self.softening:g} {self.description}>")


class DeviceView:
    """A view of a simulation's state in GPU memory (``Simulation.device_positions``), for CuPy,
    PyTorch, Numba or JAX without a copy. Valid for the state it was taken at: after the simulation
    steps or changes, handing it on raises ``RuntimeError`` (a consumer that already holds the
    memory sees it overwritten or freed). ``shape``, ``typestr``, ``pointer``, ``strides`` (bytes)
    and ``device`` (the CUDA ordinal) describe it."""

    def __init__(self, sim, tensor, interface, generation, device):
        self._sim = sim
        self._tensor = tensor
        self._interface = interface
        self._generation = generation
        self.device = device
        self.shape = interface["shape"]
        self.typestr = interface["typestr"]
        self.strides = interface["strides"]
        self.pointer = interface["data"][0]

    @property
    def valid(self):
        """True while the simulation is at the state this view was taken at."""
        return self._sim._engine.generation == self._generation

    def _check(self):
        if not self.valid:
            raise RuntimeError("this device view is of an earlier state (the simulation has stepped or changed "
                               "since); take sim.device_positions again")

    @property
    def __cuda_array_interface__(self):
        self._check()
        return dict(self._interface)

    def __dlpack__(self, *args, **kwargs):
        self._check()
        return self._tensor.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()

    def __repr__(self):
        return (f"<nbody.DeviceView {self.shape} {self.typestr} on GPU {self.device} at {self.pointer:#x}"
                f"{'' if self.valid else ' (stale)'}>")
