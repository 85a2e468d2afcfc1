# tests/python/test_validation.py - bad input is refused before any work, with the command line's rules
# and a message naming the argument: ValueError for a bad value, TypeError for a value of the wrong kind.
import re
import warnings

import numpy as np
import pytest

import nbody

GOOD = dict(positions=np.zeros((4, 3)) + np.arange(4)[:, None], velocities=np.zeros((4, 3)), masses=np.full(4, 0.25))


def from_arrays(**changes):
    arrays = dict(GOOD, **changes)
    return nbody.Simulation.from_arrays(arrays["positions"], arrays["velocities"], arrays["masses"], backend="cpu")


@pytest.mark.parametrize("changes,error,message", [
    (dict(positions=np.zeros((4, 2))), ValueError, r"positions: shape \(4, 2\); expected \(N, 3\)"),
    (dict(velocities=np.zeros(12)), ValueError, r"velocities: shape \(12,\); expected \(N, 3\)"),
    (dict(masses=np.full((4, 1), 0.25)), ValueError, r"masses: shape \(4, 1\); expected \(N,\)"),
    (dict(positions=np.zeros((0, 3)), velocities=np.zeros((0, 3)), masses=np.zeros(0)), ValueError,
     "positions: no bodies"),
    (dict(velocities=np.zeros((3, 3))), ValueError, "velocities: 3 bodies, positions has 4"),
    (dict(positions=np.where(np.eye(4, 3) > 0, np.nan, 1.0)), ValueError, "positions: body 0 has a value that is not finite"),
    (dict(velocities=np.full((4, 3), np.inf)), ValueError, "velocities: body 0 has a value that is not finite"),
    (dict(masses=np.array([0.25, 0.25, -1.0, 0.25])), ValueError, "masses: body 2 has mass -1.0; masses must not be negative"),
    (dict(masses=np.ones(4, dtype=bool)), TypeError,
     "masses: expected a float64 or float32 array, or integers; got dtype bool"),
    (dict(positions="bodies.txt"), TypeError, "positions: expected a float64 or float32 array"),
    (dict(positions=[[0, 0, 0], [1, 0], [2, 0, 0], [3, 0, 0]]), ValueError, r"^positions: not an array of numbers \("),
    # The values under a mask are not the bodies the caller meant: refused, not read.
    (dict(velocities=np.ma.masked_array(np.ones((4, 3)), mask=np.eye(4, 3)[::-1] > 0)), ValueError,
     r"^velocities: a masked array with 3 masked values \(the first in body 1\); nbody would read the values under"),
    (dict(masses=np.ma.masked_array(np.full(4, 0.25), mask=[0, 0, 1, 0])), ValueError,
     r"^masses: a masked array with 1 masked value \(the first in body 2\)"),
    # Beyond what fp32's squared differences hold (an infinite position at the first step, blamed on the steps).
    (dict(positions=GOOD["positions"] * 1e39), ValueError, r"body 1: position x is 1e\+39; nbody reads magnitudes up to 1e15"),
    (dict(masses=np.full(4, 1e300)), ValueError, r"body 0: mass is 1e\+300; nbody reads magnitudes up to 1e15"),
])
def test_bad_arrays_are_refused_naming_the_argument(changes, error, message):
    with pytest.raises(error, match=message):
        from_arrays(**changes)


def test_a_masked_array_with_nothing_masked_is_its_values():
    masked = np.ma.masked_array(GOOD["positions"])
    assert np.array_equal(from_arrays(positions=masked).positions[:], GOOD["positions"])


@pytest.mark.parametrize("time,error,message", [
    (None, TypeError, r"^time: expected a number or text with a unit, got None \(NoneType\)$"),
    (1j, TypeError, r"^time: expected a number or text with a unit, got 1j \(complex\)$"),
    (True, TypeError, r"^time: expected a number or text with a unit, got True \(bool\)$"),
    # The times a run can name (core/bounds.h), as the tipsy and HDF5 readers hold a file's time to.
    (float("inf"), ValueError, r"^time=inf: not a time in \[-1e27, 1e27\]$"),
    (float("nan"), ValueError, r"^time=nan: not a time in \[-1e27, 1e27\]$"),
    (1e300, ValueError, r"^time=1e\+300: not a time in \[-1e27, 1e27\]$"),
    (-1e300, ValueError, r"^time=-1e\+300: not a time in \[-1e27, 1e27\]$"),
    (1.0000001e27, ValueError, r"^time=1.0000001e\+27: not a time in \[-1e27, 1e27\]$"),
])
def test_a_bad_start_time_is_refused_by_kind(time, error, message):
    with pytest.raises(error, match=message):
        nbody.Simulation.from_arrays(GOOD["positions"], GOOD["velocities"], GOOD["masses"], time=time, backend="cpu")


def test_a_start_time_at_the_bounds_is_taken():  # the negative control of the times refused above
    # In the range, a time is taken where fp64 resolves the run's step there (2^-44 of the time at most); at the
    # range's bounds no step up to dt's own bound (1e12) is resolved, and the refusal says so, not "not a time".
    for time in (1e20, -1e20):
        sim = nbody.Simulation.from_arrays(GOOD["positions"], GOOD["velocities"], GOOD["masses"], time=time,
                                           dt=1e9, backend="cpu")
        assert sim.time == time
    for time in (1e27, -1e27, 9e26):
        with pytest.raises(ValueError, match=r"dt=1e\+12 is below what fp64 times resolve there"):
            nbody.Simulation.from_arrays(GOOD["positions"], GOOD["velocities"], GOOD["masses"], time=time, dt=1e12,
                                         backend="cpu")


def test_a_misspelt_setting_is_refused_naming_the_one_meant():
    # sim.dtmax = 0.01 would have been an attribute of its own, the run going on with the old dt_max.
    sim = nbody.Simulation(n=16, backend="cpu", integrator="hermite4")
    for typo, meant in (("dtmax", "dt_max"), ("softenning", "softening"), ("position", "positions")):
        with pytest.raises(AttributeError, match=rf"^Simulation has no '{typo}'; did you mean '{meant}'\? \(nothing "
                                                 r"was changed\)$"):
            setattr(sim, typo, 0.01)
        assert typo not in vars(sim)
    assert sim.dt_max == 0.0625 and sim.softening == 0.01
    # The time is where the run has reached: not assigned, under either name, with what to do instead.
    for name in ("time", "t"):
        with pytest.raises(AttributeError, match=r"^time is where the run has reached, not a setting \(nothing was "
                                                 r"changed\): run\(t_end=\.\.\.\) runs to a time"):
            setattr(sim, name, 10.0)
    assert sim.time == 0.0
    # Names of the script's own, also those close to a method or a read-only property, are its own.
    for own in ("label", "times", "config", "runs", "diagnostic"):
        setattr(sim, own, 1)
        assert getattr(sim, own) == 1

    class Named(nbody.Simulation):
        def notice(self):  # a method close to 'notices', which the simulation sets on itself
            return "mine"

    # A setting that is no property is given to configure(): assigned, it would change nothing.
    for name, value in (("kernel", "reference"), ("threads", 1), ("mass_unit", "1Msun"), ("backend", "cuda")):
        with pytest.raises(AttributeError, match=rf"^Simulation\.{name} cannot be assigned; give it to "
                                                 rf"configure\({name}=\.\.\.\) \(nothing was changed\)$"):
            setattr(sim, name, value)
        assert name not in vars(sim)
    with pytest.raises(AttributeError, match=r"^Simulation\.n is where a simulation starts; it cannot change"):
        sim.n = 5

    # The same name in other capitals, and other programs' words for a setting (REBOUND's eps), are typos too.
    leapfrog = nbody.Simulation(n=16, backend="cpu")
    for typo, meant in (("Dt", "dt"), ("DT", "dt"), ("Softening", "softening"), ("eps", "softening"),
                        ("timestep", "dt")):
        with pytest.raises(AttributeError, match=rf"^Simulation has no '{typo}'; did you mean '{meant}'\? "):
            setattr(leapfrog, typo, 0.5)
        assert typo not in vars(leapfrog)
    assert leapfrog.dt == 0.01 and leapfrog.softening == 0.01
    with pytest.raises(AttributeError, match=r"^Simulation has no 'tmax'; the time to run to is run\(\)'s t_end"):
        leapfrog.tmax = 10.0
    # hermite4 has no dt to mean (sim.dt is refused there): its longest step and the bodies' own are named instead.
    hermite = nbody.Simulation(n=16, backend="cpu", integrator="hermite4")
    with pytest.raises(AttributeError, match=r"^Simulation has no 'timestep'; hermite4 chooses each body's step: the "
                                             r"longest is dt_max \(sim\.dt_max = \.\.\.\), each body's own "
                                             r"sim\.time_steps \(nothing was changed\)$"):
        hermite.timestep = 0.01
    with pytest.raises(AttributeError, match=r"^Simulation has no 'Dt'; hermite4 chooses each body's step"):
        hermite.Dt = 0.01

    class Softened(nbody.Simulation):  # a subclass's own words are its own
        def __init__(self, eps, **settings):
            super().__init__(**settings)
            self.eps, self.Timestep = eps, 0.5

    assert Softened(0.1, n=16, backend="cpu").eps == 0.1

    assert Named(n=16, backend="cpu").notice() == "mine"
    with pytest.raises(AttributeError, match=r"^Named has no 'dtmax'; did you mean 'dt_max'\?"):
        Named(n=16, backend="cpu").dtmax = 0.01


def test_a_misspelt_keyword_is_refused_naming_the_one_meant():
    # Python's own message names neither the keyword meant nor the ones there are.
    with pytest.raises(TypeError, match=r"^Simulation\.__init__\(\) got an unexpected keyword argument 'dtmax'; "
                                        r"did you mean 'dt_max'\?$"):
        nbody.Simulation(n=16, backend="cpu", integrator="hermite4", dtmax=0.1)
    with pytest.raises(TypeError, match=r"^Simulation\.__init__\(\) got an unexpected keyword argument 'bodies'; "
                                        r"did you mean 'n'\?$"):  # the command line's --bodies
        nbody.Simulation(bodies=100, backend="cpu")
    sim = nbody.Simulation(n=16, backend="cpu")
    with pytest.raises(TypeError, match=r"^Simulation\.run\(\) got an unexpected keyword argument 't_emd'; did you "
                                        r"mean 't_end'\?$"):
        sim.run(t_emd=1.0)
    with pytest.raises(TypeError, match=r"^Simulation\.run\(\) got an unexpected keyword argument 'colour'; it takes "
                                        r"steps, t_end, callback, every, diagnostics, "):
        sim.run(steps=1, colour="red")
    assert sim.steps == 0  # refused before any step
    with pytest.raises(TypeError, match=r"^Simulation\.run\(\) got an unexpected keyword argument 'precision'; "
                                        r"precision is a setting of the simulation: sim\.precision = \.\.\. or "
                                        r"sim\.configure\(precision=\.\.\.\) before the run$"):
        sim.run(steps=1, precision="fp32")
    with pytest.raises(TypeError, match=r"'n'; n is where a simulation starts: give it to nbody\.Simulation$"):
        sim.run(steps=1, n=5)
    # Another program's word for a setting, where the setting is not taken: the setting named, and where it goes.
    with pytest.raises(TypeError, match=r"'eps'; did you mean 'softening'\? softening is a setting of the simulation: "
                                        r"sim\.softening = \.\.\. or sim\.configure\(softening=\.\.\.\) before the run$"):
        sim.run(steps=1, eps=0.1)
    with pytest.raises(TypeError, match=r"'tmax'; did you mean 't_end'\? the time to run to is run\(\)'s t_end"):
        nbody.Simulation(tmax=1.0)
    with pytest.raises(TypeError, match=r"'kernel'; kernel is a setting of the simulation: sim\.configure\(kernel=\.\.\.\) "
                                        r"before the run$"):  # no sim.kernel = ...: configure only
        sim.run(steps=1, kernel="tiled")
    with pytest.raises(TypeError, match=r"^Simulation\.integrate\(\) got an unexpected keyword argument 'evry'; "
                                        r"did you mean 'every'\?$"):
        sim.integrate(1.0, evry=2)
    # The settings of configure, from_arrays, load and restart (the library's list of them): the same hint.
    with pytest.raises(TypeError, match=r"^Simulation\.configure\(\) got an unexpected keyword argument 'softning'; "
                                        r"did you mean 'softening'\?$"):
        sim.configure(softning=0.1)
    with pytest.raises(TypeError, match=r"^Simulation\.from_arrays\(\) got an unexpected keyword argument 'dtmax'; "
                                        r"did you mean 'dt_max'\?$"):
        nbody.Simulation.from_arrays(GOOD["positions"], GOOD["velocities"], GOOD["masses"], backend="cpu", dtmax=0.1)
    with pytest.raises(TypeError, match=r"^Simulation\.load\(\) got an unexpected keyword argument 'precison'; "
                                        r"did you mean 'precision'\?$"):
        nbody.Simulation.load("any.bin", precison="fp64")  # refused before the file is read
    with pytest.raises(TypeError, match=r"^Simulation\.configure\(\) got an unexpected keyword argument 'colour'; "
                                        r"it takes integrator, dt, damping, softening, "):
        sim.configure(colour="red")
    with pytest.raises(TypeError, match=r"^'n' is where a simulation starts; it cannot change while it runs$"):
        sim.configure(n=5)
    with pytest.raises(TypeError, match=r"^'seed' chooses a scenario; the bodies come from elsewhere here$"):
        nbody.Simulation.restart("any.h5", seed=3)
    assert set(nbody._nbody.SETTING_KEYWORDS) >= {"integrator", "softening", "eta", "dt_max"}


@pytest.mark.parametrize("keywords,error,message", [
    (dict(precision="fp16"), ValueError, "precision='fp16': valid: fp32, fp64"),
    (dict(integrator="leapfrg"), ValueError, "integrator='leapfrg': valid: leapfrog, "),
    (dict(scenario="galaxy"), ValueError, "scenario='galaxy': valid: plummer, "),
    (dict(threading="many"), ValueError, "threading='many': valid: single, workers"),
    (dict(n=0), ValueError, "n=0: must be a whole number from 1 to 1073741824"),
    (dict(n=2.5), TypeError, "n: expected a whole number, got 2.5"),
    (dict(n=True), TypeError, "n: expected a whole number"),
    (dict(dt=-1.0), ValueError, "dt=-1.0: must be a positive number of at most 1e12"),
    (dict(dt=float("nan")), ValueError, "dt=nan: must be a positive number"),
    (dict(softening=0.0), ValueError, "softening=0.0: must be a positive length of at most 1e12; 0 .* only with"),
    (dict(softening=-1.0), ValueError,
     r"^softening=-1.0: must be a positive length of at most 1e12 \(or 0, no softening, with integrator='hermite4'\)$"),
    (dict(integrator="hermite4", eta=0.0), ValueError, r"eta=0.0: must be in \(0, 100\]"),
    (dict(integrator="hermite4", eta_start=float("inf")), ValueError, r"eta_start=inf: must be in \(0, 100\]"),
    (dict(integrator="hermite4", dt_max=-1.0), ValueError, "dt_max=-1.0: must be"),
    (dict(softening=1e-15, precision="fp32"), ValueError, "too small for fp32"),
    (dict(damping=1.5), ValueError, r"damping=1.5: must be in \(0, 1\]"),
    (dict(numgpus=0), ValueError, "numgpus=0: must be a whole number from 1 to 256"),
    (dict(numgpus=2, gpus=[0]), ValueError, "numgpus=2 and gpus with 1 GPUs disagree"),
    (dict(gpus=[0]), ValueError, "^gpus applies to the CUDA backend; use numgpus for host devices$"),
    (dict(weights=[1, -1]), ValueError, "is not a relative share"),
    (dict(numgpus=2, weights=[1, 1, 1]), ValueError, "3 weights for 2 devices"),
    (dict(weights=[1, 1]), ValueError, "^weights: 2 weights for 1 device; give one per device$"),
    (dict(seed=-1), ValueError, "seed=-1: must be a whole number from 0"),
    (dict(scenario="two-body", n=3), ValueError, "^n=3: the two-body scenario has exactly 2 bodies$"),
    (dict(scenario="two-body", seed=7), ValueError, "^seed=7 does nothing with scenario='two-body': its two bodies "
                                                    "are placed, not drawn; leave seed out$"),
    (dict(kernel="fast"), ValueError, "^kernel='fast': the cpu backend has simd, reference$"),
    (dict(launch="graph"), ValueError, "^launch='graph': CUDA graphs need the CUDA backend"),
    (dict(integrator="hermite4", launch="graph"), ValueError, "^launch='graph': hermite4 .* use launch='stream'$"),
    (dict(block_size=128), ValueError, "^block_size=128 applies to the CUDA backend's naive and tiled kernels"),
    (dict(exchange="direct"), ValueError, "^exchange='direct' applies to the CUDA backend"),
    (dict(precision=64), TypeError, "precision: expected a name"),
    # NumPy's values as the numbers they hold (NumPy 2's repr would say np.float64(-1.0)); an array is no number.
    (dict(dt=np.float64(-1.0)), ValueError, r"^dt=-1\.0: must be"),
    (dict(dt=np.array([0.01])), TypeError, r"^dt: expected a number, got array\(\[0\.01\]\) \(ndarray\)$"),
    (dict(dt=10**400), OverflowError, "too large"),  # Python's own word: a number, past a double's range
    (dict(eccentricity=0.9), ValueError, r"^eccentricity=0.9: applies to scenario='two-body' only \(this one's is "
                                         r"'plummer'\)$"),
])
def test_bad_options_are_refused_with_the_command_lines_rules(keywords, error, message):
    with pytest.raises(error, match=message):
        nbody.Simulation(**dict(dict(n=16, backend="cpu"), **keywords))


def test_asking_for_cuda_where_there_is_none_says_why():
    if nbody.devices():
        pytest.skip("a GPU is visible")
    with pytest.raises(ValueError, match="^backend='cuda': "):
        nbody.Simulation(n=16, backend="cuda")


def test_bad_files_are_refused_naming_them(tmp_path):
    with pytest.raises(ValueError, match="nope.bin"):
        nbody.Simulation.load(tmp_path / "nope.bin", backend="cpu")
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match="junk.h5"):
        nbody.Simulation.restart(tmp_path / "junk.h5", backend="cpu")
    with pytest.raises(ValueError, match="path '': the path is empty"):
        nbody.Simulation.load("")
    with pytest.raises(TypeError, match="'n' chooses a scenario"):
        nbody.Simulation.load(tmp_path / "x.bin", n=5)
    sim = nbody.Simulation(n=8, backend="cpu")
    with pytest.raises(ValueError, match=r"^Simulation.checkpoint\('.*/missing/c.h5'\): the folder .* does not exist"):
        sim.checkpoint(tmp_path / "missing" / "c.h5")
    with pytest.raises(ValueError, match=r"^Simulation.save\('.*'\): is a directory; name a file in it$"):
        sim.save(tmp_path)
    with pytest.raises(ValueError, match="format='big': valid: standard, little-endian"):
        sim.save(tmp_path / "s.bin", format="big")


def test_units_are_refused_in_pythons_spelling():
    with pytest.raises(ValueError, match=r"^mass_unit='1e5Msun': give length_unit too \(the time unit"):
        nbody.Simulation(n=16, backend="cpu", mass_unit="1e5Msun")
    with pytest.raises(ValueError, match=r"^length_unit='1pc': give mass_unit too"):
        nbody.Simulation(n=16, backend="cpu", length_unit="1pc")
    # An empty unit is named itself, not taken for one not given (which blamed the other).
    with pytest.raises(ValueError, match=r"^mass_unit='': the unit is empty; give e\.g\. '1e5Msun'$"):
        nbody.Simulation(n=16, backend="cpu", mass_unit="", length_unit="1pc")
    with pytest.raises(ValueError, match=r"^length_unit=' ': the unit is empty; give e\.g\. '1pc'$"):
        nbody.Simulation(n=16, backend="cpu", mass_unit="1Msun", length_unit=" ")
    with pytest.raises(ValueError, match=r"^mass_unit='1e5Mparsec': unknown unit 'Mparsec'; give a positive number"):
        nbody.Simulation(n=16, backend="cpu", mass_unit="1e5Mparsec", length_unit="1pc")
    with pytest.raises(TypeError, match=r"^mass_unit: expected a mass and a unit \(e.g. '1e5Msun'\), got 1.0 \(float\)$"):
        nbody.Simulation(n=16, backend="cpu", mass_unit=1.0, length_unit="1pc")
    with pytest.raises(TypeError, match=r"^length_unit: expected a length and a unit"):
        nbody.Simulation(n=16, backend="cpu", mass_unit="1Msun", length_unit=5)


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_run_outputs_are_refused_in_pythons_spelling(tmp_path):
    sim = nbody.Simulation(n=8, backend="cpu")
    with pytest.raises(ValueError, match=r"^snapshots='.*/': ends in '/': name the series' files, e.g. "
                                         r"snapshots='.*/snap' \("):
        sim.run(steps=2, snapshots=f"{tmp_path}/")
    with pytest.raises(ValueError, match=r"^checkpoint_every=1 writes and save both name .*c_00000002.h5; give each"):
        sim.run(steps=4, checkpoint=tmp_path / "c.h5", checkpoint_every=1, save=tmp_path / "c_00000002.h5")
    with pytest.raises(ValueError, match=r"^diagnostics='.*x.xyz': unknown format '.xyz'"):
        sim.run(steps=2, diagnostics=tmp_path / "x.xyz")
    with pytest.raises(ValueError, match=r"^diagnostics='.*/d.csv': is a directory; name a file in it$"):
        (tmp_path / "d.csv").mkdir()
        sim.run(steps=2, diagnostics=tmp_path / "d.csv")
    with pytest.raises(ValueError, match=r"^save='.*/missing/s.bin': the folder .*/missing does not exist$"):
        sim.run(steps=2, save=tmp_path / "missing" / "s.bin")
    with pytest.raises(ValueError, match=r"^snapshot_precision='fp64': give snapshots too$"):
        sim.run(steps=2, snapshot_precision="fp64")
    # A series' refusal names the keyword's value as given, then the file of the series it would write.
    (tmp_path / "plain").write_text("a file")
    with pytest.raises(ValueError, match=r"^snapshots='.*/plain/s' writes .*/plain/s_0+\.\w+: .*/plain is not a "
                                         r"folder$"):
        sim.run(steps=2, snapshots=tmp_path / "plain" / "s")
    assert sim.steps == 0


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_output_names_are_refused_as_the_command_line_refuses_them(tmp_path, monkeypatch, cli):
    # '-' is no standard output here, and a name ending in .param is a parameter file to pynbody and yt: the library's
    # checks, which the command line makes too, in Python's words (a file named '-' or an HDF5 .param was written).
    monkeypatch.chdir(tmp_path)
    sim = nbody.Simulation(n=8, backend="cpu")
    dash = r"nbody reads and writes files, not standard input or output; name a file \(\./- for one named '-'\)$"
    with pytest.raises(ValueError, match=r"^Simulation\.save\('-'\): " + dash):
        sim.save("-")
    with pytest.raises(ValueError, match=r"^Simulation\.checkpoint\('-'\): " + dash):
        sim.checkpoint("-")
    for keyword in ("checkpoint", "save", "diagnostics", "snapshots"):
        with pytest.raises(ValueError, match=rf"^{keyword}='-': " + dash):
            sim.run(steps=1, **{keyword: "-"})
    # (The last line: a machine's MPI library may say things of its own before it.)
    assert cli("--run", "--steps", 1, "--checkpoint", "-", expect=2).stderr.splitlines()[-1].startswith(
        "error: --checkpoint -: nbody reads and writes files")
    param = (r"an HDF5 checkpoint named \.param, which pynbody and yt would read as a parameter file \(they take every "
             r"\*\.param of its folder for one\); name it otherwise \(run\.h5, say\)$")
    with pytest.raises(ValueError, match=r"^Simulation\.checkpoint\('ok\.param'\): " + param):
        sim.checkpoint("ok.param")
    with pytest.raises(ValueError, match=r"^checkpoint='ok\.PARAM': " + param):
        sim.run(steps=1, checkpoint="ok.PARAM")
    assert cli("--run", "--steps", 1, "--checkpoint", "ok.param", expect=2).stderr.splitlines()[-1] == \
        f"error: --checkpoint ok.param: {param}".replace("\\", "").replace("$", "")
    with pytest.raises(ValueError, match=r"^Simulation\.save\('ok\.param'\): a tipsy file named \.param"):
        sim.save("ok.param")
    assert sim.steps == 0 and not list(tmp_path.iterdir())  # nothing was written
    # Negative control: a file named '-' is written as ./-.
    sim.checkpoint("./-")
    assert (tmp_path / "-").is_file()


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_damaged_file_is_one_line_however_often_it_is_read(tmp_path, capfd):
    # HDF5 prints its own stack of errors unless told not to, per thread where it is thread-safe: each read of a
    # file cut short is the one ValueError, with nothing on stderr, the second and third as the first.
    nbody.Simulation(n=8, backend="cpu").checkpoint(tmp_path / "c.h5")
    whole = (tmp_path / "c.h5").read_bytes()
    (tmp_path / "cut.h5").write_bytes(whole[:-1])
    capfd.readouterr()
    for _ in range(3):
        with pytest.raises(ValueError, match=r"cut\.h5: cannot open the HDF5 file \(damaged, or not one HDF5 can read\)$"):
            nbody.Simulation.restart(tmp_path / "cut.h5", backend="cpu")
    assert capfd.readouterr().err == ""


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_files_reader_names_pythons_entry_points(tmp_path):
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match=r"junk.h5: not an HDF5 file; Simulation.restart takes a checkpoint written "
                                         r"by Simulation.checkpoint$"):
        nbody.Simulation.restart(tmp_path / "junk.h5", backend="cpu")
    with pytest.raises(ValueError, match=r": not a regular file; give a checkpoint written by Simulation.checkpoint$"):
        nbody.Simulation.restart(tmp_path, backend="cpu")
    sim = nbody.Simulation(n=8, backend="cpu")
    sim.run(steps=1, checkpoint=tmp_path / "c.h5", snapshots=tmp_path / "snap")
    with pytest.raises(ValueError, match=r"c.h5: an nbody checkpoint, not a snapshot; Simulation.restart continues "
                                         r"it \(Simulation.load reads tipsy files and HDF5 snapshots, nbody's and others'\)$"):
        nbody.Simulation.load(tmp_path / "c.h5", backend="cpu")
    snapshot = sorted(tmp_path.glob("snap_*.hdf5"))[0]
    with pytest.raises(ValueError, match=r"\(bodies for analysis, no run settings\); Simulation.restart takes a file "
                                         r"written by Simulation.checkpoint, and Simulation.load starts a new run "
                                         r"from a snapshot \(not a checkpoint"):
        nbody.Simulation.restart(snapshot, backend="cpu")
    # load starts a new run from it, at its time.
    loaded = nbody.Simulation.load(snapshot, backend="cpu")
    assert loaded.steps == 0 and loaded.time == 0.0 and loaded.n == 8
    assert any("is an nbody snapshot of step 0" in n for n in loaded.notices), loaded.notices


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_an_hdf5_files_bodies_are_checked_as_a_tipsy_files_are(tmp_path, cli):
    # A value beyond the bound the tipsy reader and from_arrays hold bodies to (1e15), in a snapshot or a checkpoint
    # edited by hand: refused as the file is read, naming it, the body and the field, by Python and the command line
    # alike (it ran, failed steps later blaming dt and the softening, and saved a tipsy file nbody refuses to read).
    h5py = pytest.importorskip("h5py")
    cli("--run", "--bodies", 64, "--steps", 0, "--snapshots", tmp_path / "s", "--checkpoint", tmp_path / "c.h5")
    snapshot = tmp_path / "s_00000000.hdf5"
    with h5py.File(snapshot, "r+") as f:
        group = next(g for g in ("PartType4", "PartType1", "PartType0") if g in f)
        f[group + "/Coordinates"][3, 1] = 1e20
        body = int(f[group + "/ParticleIDs"][3])
    said = rf"s_00000000.hdf5: body {body}: position y is 1e\+20; nbody reads magnitudes up to 1e15"
    with pytest.raises(ValueError, match=said):
        nbody.Simulation.load(snapshot, backend="cpu")
    assert re.search(said, cli("--run", "--load", snapshot, "--steps", 3, expect=2).stderr)
    checkpoint = tmp_path / "c.h5"
    with h5py.File(checkpoint, "r+") as f:
        del f["Header"].attrs["Checksum"]  # edited on purpose
        f[group + "/Velocities"][5, 0] = -1e30
        body = int(f[group + "/ParticleIDs"][5])
    said = rf"c.h5: body {body}: velocity x is -1e\+30; nbody reads magnitudes up to 1e15"
    with pytest.raises(ValueError, match=said):
        nbody.Simulation.restart(checkpoint, backend="cpu")
    assert re.search(said, cli("--run", "--restart", checkpoint, "--steps", 3, expect=2).stderr)


def test_a_refused_change_changes_nothing():
    sim = nbody.Simulation(n=32, backend="cpu")
    sim.run(steps=3)
    before = (sim.positions, sim.dt, sim.softening, sim.integrator, sim.steps)
    for change, error in ((dict(dt=0.0), ValueError), (dict(integrator="rk4"), ValueError),
                          (dict(softening=-1.0), ValueError), (dict(numgpus=300), ValueError),
                          (dict(n=10), TypeError), (dict(colour="red"), TypeError)):
        with pytest.raises(error):
            sim.configure(**change)
    with pytest.raises(ValueError, match="positions: 5 rows for a simulation of 32 bodies"):
        sim.positions = np.zeros((5, 3))
    with pytest.raises(ValueError, match="masses: body 3 has mass"):
        sim.masses = np.where(np.arange(32) == 3, -1.0, 1.0 / 32)
    with pytest.raises(ValueError, match="velocities: body 0 has a value that is not finite"):
        sim.velocities = np.full((32, 3), np.nan)
    after = (sim.positions, sim.dt, sim.softening, sim.integrator, sim.steps)
    assert np.array_equal(before[0], after[0]) and before[1:] == after[1:]


def test_run_needs_steps_or_t_end_and_stops_at_t_end():
    sim = nbody.Simulation(n=16, backend="cpu", dt=0.1)
    with pytest.raises(TypeError, match="give steps or t_end"):
        sim.run()
    with pytest.raises(ValueError, match=r"^run: steps=1 and t_end=1.0: give one of them, not both$"):
        sim.run(steps=1, t_end=1.0)
    with pytest.raises(ValueError, match="steps=-1"):
        sim.run(steps=-1)
    # A new simulation goes forward from its start, as nbody --t-end does: a time before it is a mistake.
    with pytest.raises(ValueError, match=r"^t_end=-1: before the time 0 that plummer \(seed 42\) starts the run at, and a "
                                         r"run goes forward; give a later time$"):
        sim.run(t_end=-1)
    assert sim.run(t_end=1.05) == 11 and sim.time >= 1.05 and sim.time - 0.1 < 1.05
    with pytest.warns(RuntimeWarning, match=r"^t_end=0.5: the run is already at time 1.1; no steps$"):
        assert sim.run(t_end=0.5) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # at the time asked for: nothing to warn of
        assert sim.run(t_end=sim.time) == 0
