# tests/python/test_foreign_snapshots.py - initial conditions another program wrote in the GADGET/SWIFT HDF5
# layout (as MUSIC, GADGET-4, SWIFT or a script with h5py write them) start a run with ``nbody --load`` and
# ``Simulation.load``: the bodies as the file holds them, the velocities and time converted to the G = 1 units of
# the file's mass and length, the energy as the file's own numbers give it in its own units.
import os
import subprocess
import warnings

import numpy as np
import pytest

import nbody

h5py = pytest.importorskip("h5py")

# cgs, as nbody takes them (sim/io/units.h): CODATA 2018's G, the IAU's nominal solar mass and the parsec.
G_CGS = 6.67430e-8
MSUN_G = 1.3271244e26 / G_CGS
KPC_CM = 1.495978707e13 * 648000.0 / np.pi * 1e3
KM_S = 1e5


def cluster(n=200, seed=4):
    """A cold clump in kpc, km/s and 1e10 Msun: positions, velocities, masses."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(scale=2.0, size=(n, 3))
    vel = rng.normal(scale=50.0, size=(n, 3))
    mass = rng.uniform(0.5, 1.5, size=n) / n
    return pos, vel, mass


def write_gadget(path, parts, time=0.0, units=None, mass_table=None, header=None, dtype=np.float32, types=6,
                 ids_by_type=False):
    """parts: {type: (pos, vel, mass or None)}; units: ("swift" | "gadget4" | "arepo", L_cm, M_g, V_cm_s) or None; types: how
    many the header counts (current SWIFT: 7); ParticleIDs 0, 1, ... in the file's order, or with ``ids_by_type`` 1000
    times the type plus the body's place in it."""
    counts = np.zeros(types, dtype=np.uint32)
    for t, (pos, _, _) in parts.items():
        counts[t] = len(pos)
    with h5py.File(path, "w") as f:
        h = f.create_group("Header")
        h.attrs["NumPart_ThisFile"] = counts
        h.attrs["NumPart_Total"] = counts
        h.attrs["NumPart_Total_HighWord"] = np.zeros(types, dtype=np.uint32)
        h.attrs["MassTable"] = np.zeros(types) if mass_table is None else np.asarray(mass_table, dtype=float)
        h.attrs["Time"] = time
        h.attrs["Redshift"] = 0.0
        h.attrs["BoxSize"] = 0.0
        h.attrs["NumFilesPerSnapshot"] = np.int32(1)
        for key, value in (header or {}).items():
            h.attrs[key] = value
        first = 0
        for t, (pos, vel, mass) in sorted(parts.items()):
            g = f.create_group(f"PartType{t}")
            g["Coordinates"] = pos.astype(dtype)
            g["Velocities"] = vel.astype(dtype)
            g["ParticleIDs"] = np.arange(len(pos), dtype=np.uint32) + (1000 * t if ids_by_type else first)
            first += len(pos)
            if mass is not None:
                g["Masses"] = mass.astype(dtype)
        if units is not None:
            kind, length, mass, velocity = units
            if kind == "swift":
                u = f.create_group("Units")
                u.attrs["Unit length in cgs (U_L)"] = np.array([length])
                u.attrs["Unit mass in cgs (U_M)"] = np.array([mass])
                u.attrs["Unit time in cgs (U_t)"] = np.array([length / velocity])
                u.attrs["Unit current in cgs (U_I)"] = np.array([1.0])
                u.attrs["Unit temperature in cgs (U_T)"] = np.array([1.0])
            elif kind == "arepo":  # in the header
                h.attrs["UnitLength_in_cm"] = length
                h.attrs["UnitMass_in_g"] = mass
                h.attrs["UnitVelocity_in_cm_per_s"] = velocity
            else:
                p = f.create_group("Parameters")
                p.attrs["UnitLength_in_cm"] = length
                p.attrs["UnitMass_in_g"] = mass
                p.attrs["UnitVelocity_in_cm_per_s"] = velocity


def energy(pos, vel, mass, g):
    """Kinetic plus potential energy, unsoftened, by direct summation in the units of g."""
    kinetic = 0.5 * np.sum(mass * np.sum(vel * vel, axis=1))
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt(np.sum(d * d, axis=2))
    i, j = np.triu_indices(len(pos), 1)
    return kinetic - g * np.sum(mass[i] * mass[j] / r[i, j])


@pytest.mark.parametrize("kind,types", [("swift", 7), ("gadget4", 6), ("arepo", 6)])
def test_a_snapshot_in_physical_units_starts_a_run_in_them(tmp_path, kind, types):
    pos, vel, mass = cluster()
    path = tmp_path / "ics.hdf5"
    # GADGET's customary units: 1 kpc, 1e10 Msun, 1 km/s (its time unit 0.978 Gyr), and Time 0.05 in them. Current
    # SWIFT counts seven types (its neutrinos).
    write_gadget(path, {1: (pos, vel, mass)}, time=0.05, units=(kind, KPC_CM, 1e10 * MSUN_G, KM_S), dtype=np.float64,
                 types=types)
    sim = nbody.Simulation.load(path, backend="cpu", precision="fp64", softening=1e-6)
    assert sim.units["length_cm"] == pytest.approx(KPC_CM, rel=1e-12)
    assert sim.units["mass_g"] == pytest.approx(1e10 * MSUN_G, rel=1e-12)
    # The G = 1 velocity unit of 1 kpc and 1e10 Msun: sqrt(G M / L), 207.4 km/s.
    v_unit = np.sqrt(G_CGS * 1e10 * MSUN_G / KPC_CM)
    assert sim.units["velocity_km_s"] == pytest.approx(v_unit / KM_S, rel=1e-12)
    np.testing.assert_array_equal(sim.positions, pos)
    np.testing.assert_array_equal(sim.masses, mass)
    np.testing.assert_allclose(sim.velocities, vel * KM_S / v_unit, rtol=1e-14)
    assert sim.time == pytest.approx(0.05 * (KPC_CM / KM_S) / (KPC_CM / v_unit), rel=1e-14)
    # The energy nbody measures is the file's, by G in kpc (km/s)^2 / (1e10 Msun), in the run's energy unit.
    g_file = G_CGS * 1e10 * MSUN_G / KPC_CM / KM_S**2
    e_file = energy(pos, vel, mass, g_file) * (KM_S / v_unit) ** 2
    assert sim.diagnostics()["total"] == pytest.approx(e_file, rel=1e-8)


def test_the_command_line_loads_it_and_says_what_it_read(tmp_path):
    exe = os.environ.get("NBODY_EXECUTABLE")
    if not exe or not os.access(exe, os.X_OK):
        pytest.skip("NBODY_EXECUTABLE names no nbody executable")
    pos, vel, mass = cluster(n=60)
    gas = cluster(n=20, seed=5)
    path = tmp_path / "ics.hdf5"
    # Gas, stars and a type nbody has no family for (GADGET's disk), the stars' mass from the MassTable.
    write_gadget(path, {0: gas, 2: (pos[:30], vel[:30], mass[:30]), 4: (pos[30:], vel[30:], None)},
                 mass_table=[0, 0, 0, 0, 0.01, 0], ids_by_type=True)
    r = subprocess.run([exe, "--run", "--backend", "cpu", "--load", str(path), "--steps", "2", "--save",
                        str(tmp_path / "out.h5")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert ("ics.hdf5 is another program's HDF5 snapshot: PartType0 (20), PartType2 (30), PartType4 (30); no units "
            "stated; PartType0 read as gas, 4 as stars, the others as dark matter") in r.stderr
    assert ("states no units (GADGET keeps them in its parameter file), so its values are read as N-body units, G = 1, "
            "velocities included (not km/s)") in r.stderr
    assert "numbered 0, 1, ... in the file's order (its ParticleIDs are not kept)" in r.stderr
    # IDs other than that order would pair bodies wrongly where outputs are matched to the file by ID: a warning.
    assert ("warning: " + str(path) + "'s ParticleIDs are not kept: nbody numbers the bodies 0, 1, ... in the file's "
            "order (PartType0 first), and body 20 has the ID 2000 there; its outputs' ParticleIDs are that order, so "
            "match them to the file by position in it, not by ID") in r.stderr
    with h5py.File(tmp_path / "out.h5") as f:
        assert list(f["Header"].attrs["NumPart_Total"]) == [20, 30, 0, 0, 30, 0]
        np.testing.assert_allclose(f["PartType4/Masses"][:], 0.01, rtol=1e-7)


@pytest.mark.parametrize("header,part,said", [
    ({"NumFilesPerSnapshot": np.int32(4)}, {}, r"Header/NumFilesPerSnapshot is 4: one part of a snapshot split over 4 "
                                               r"files; join them into one first"),
    ({"Redshift": 49.0}, {}, r"Header/Redshift is 49: a cosmological snapshot \(comoving coordinates, Time the scale "
                             r"factor\), and nbody integrates bodies in open space"),
    ({}, {"no_masses": True}, r"PartType1 has no Masses, and Header/MassTable gives type 1 no mass \(0\)"),
    ({"MassTable": np.array([0, -1.0, 0, 0, 0, 0])}, {"no_masses": True},
     r"PartType1 has no Masses, and Header/MassTable gives type 1 the mass -1, which no mass is \(a positive one is\)"),
    ({}, {"nan": True}, r"body 3: position y"),
    ({"NumPart_Total": np.array([0, 10**6, 0, 0, 0, 0], dtype=np.uint32),
      "NumPart_ThisFile": np.array([0, 10**6, 0, 0, 0, 0], dtype=np.uint32)}, {},
     r"PartType1/Coordinates has shape \(10, 3\), expected \(1000000, 3\)"),
    ({}, {"swift_cosmology": True}, r"Cosmology/Cosmological run is 1: a cosmological snapshot \(comoving coordinates\)"),
    ({"NumPart_Total": np.array([0, 10.5, 0, 0, 0, 0])}, {}, r"Header/NumPart_Total holds 10\.5; a count is a whole "
                                                             r"number >= 0"),
    ({}, {"coordinates_group": True}, r"PartType1/Coordinates is a group, not a dataset"),
    ({}, {"no_counts": True}, r"no Header/NumPart_Total attribute \(nor NumPart_ThisFile\): the bodies of each "
                              r"particle type"),
    # Bodies the header does not count were dropped unseen: a group added by a script without its count, a seventh type.
    # A type's masses in the table and in a dataset that disagree: GADGET takes the table's, others the dataset's.
    ({"MassTable": np.array([0, 0.5, 0, 0, 0, 0])}, {}, r"PartType1/Masses gives body 0 of the type the mass 0\.\d+, "
                                                         r"and Header/MassTable every one of type 1 0\.5 \(GADGET "
                                                         r"reads the table's, where it is not 0\); give one of the two"),
    ({"NumPart_Total_HighWord": np.array([0, 1, 0, 0, 0, 0], dtype=np.uint32)}, {},
     r"Header/NumPart_Total with NumPart_Total_HighWord \(2\^32 each\) says 4294967306 bodies"),
    ({}, {"uncounted": 2}, r"PartType2/Coordinates holds 5 bodies where Header/NumPart_Total counts none of type 2: "
                           r"the header's counts say which bodies the file holds; correct them, or remove the group"),
    ({}, {"uncounted": 6}, r"PartType6/Coordinates holds 5 bodies where Header/NumPart_Total counts none of type 6 "
                           r"\(nbody reads types 0 to 5\)"),
])
def test_what_it_cannot_take_is_refused_naming_the_field(tmp_path, header, part, said):
    pos, vel, mass = cluster(n=10)
    if part.get("nan"):
        pos[3, 1] = np.nan
    path = tmp_path / "bad.hdf5"
    write_gadget(path, {1: (pos, vel, None if part.get("no_masses") else mass)}, header=header)
    if part.get("swift_cosmology"):
        with h5py.File(path, "a") as f:
            f.create_group("Cosmology").attrs["Cosmological run"] = np.array([1], dtype=np.int32)
    if part.get("no_counts"):  # a header without counts: still this layout, its counts missing
        with h5py.File(path, "a") as f:
            del f["Header"].attrs["NumPart_Total"], f["Header"].attrs["NumPart_ThisFile"]
    if part.get("uncounted"):
        with h5py.File(path, "a") as f:
            f[f"PartType{part['uncounted']}/Coordinates"] = pos[:5].astype(np.float32)
    if part.get("coordinates_group"):
        with h5py.File(path, "a") as f:
            del f["PartType1/Coordinates"]
            f.create_group("PartType1/Coordinates")
    with pytest.raises(ValueError, match=rf"^{path}: {said}.*\(not GADGET/SWIFT-layout initial conditions "
                                         rf"Simulation\.load can read\)$"):
        nbody.Simulation.load(path, backend="cpu")


def test_counts_in_num_part_this_file_alone_are_the_snapshots(tmp_path):
    # Some writers of initial conditions in one file state NumPart_ThisFile and no NumPart_Total.
    pos, vel, mass = cluster(n=40)
    path = tmp_path / "ics.hdf5"
    write_gadget(path, {1: (pos, vel, mass)})
    with h5py.File(path, "a") as f:
        del f["Header"].attrs["NumPart_Total"], f["Header"].attrs["NumPart_Total_HighWord"]
    sim = nbody.Simulation.load(path, backend="cpu")
    assert len(sim) == 40
    np.testing.assert_array_equal(np.sort(sim.masses), np.sort(mass.astype(np.float32).astype(np.float64)))


def test_a_restart_of_another_programs_snapshot_says_to_load_it(tmp_path):
    # It was refused as a damaged checkpoint ("bodies of particle type 0", "no Header/Step attribute").
    pos, vel, mass = cluster(n=10)
    path = tmp_path / "ics.hdf5"
    write_gadget(path, {0: (pos, vel, mass), 1: (pos, vel, mass)})
    with pytest.raises(ValueError, match=rf"^{path}: another program's snapshot in the GADGET/SWIFT layout \(its "
                                         r"Header has no Step\); Simulation\.load starts a new run from it"):
        nbody.Simulation.restart(path, backend="cpu")
    # Particle groups with no Header: what the layout needs is named.
    with h5py.File(path, "a") as f:
        del f["Header"]
    with pytest.raises(ValueError, match=r"an HDF5 file in neither nbody's nor GADGET's layout \(a Header group with "
                                         r"NumPart_Total or NumPart_ThisFile, and PartTypeN groups, N from 0 to 5\)"):
        nbody.Simulation.load(path, backend="cpu")


def test_units_named_for_a_file_that_states_its_own_are_a_warning(tmp_path):
    # A file in kpc loaded with length_unit='1pc' kept its numbers and called them parsecs (a system 1000 times smaller)
    # without a word; the same units in the writer's constants (GADGET's 1.989e43 g for 1e10 Msun) are none.
    pos, vel, mass = cluster(n=20)
    path = tmp_path / "ics.hdf5"
    write_gadget(path, {1: (pos, vel, mass)}, units=("gadget4", 3.085678e21, 1.989e43, KM_S))
    with pytest.warns(RuntimeWarning, match=r"mass_unit and length_unit \(1e10Msun, 1pc\) override .*ics\.hdf5's "
                                            r"1\.989e\+43g, 3\.085678e\+21cm: its numbers read in other units, not "
                                            r"converted, so every length, mass, velocity and time is another"):
        sim = nbody.Simulation.load(path, backend="cpu", mass_unit="1e10Msun", length_unit="1pc")
    np.testing.assert_array_equal(sim.positions, pos.astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbody.Simulation.load(path, backend="cpu", mass_unit="1e10Msun", length_unit="1kpc")
        nbody.Simulation.load(path, backend="cpu")


def test_units_named_for_a_file_that_states_none_warn_of_its_velocities(tmp_path):
    # GADGET's customary units (kpc, 1e10 Msun, km/s) are no G = 1 system: named for a file in them that states none,
    # its km/s were read in the 207.4 km/s these make, without a word (a cluster 207 times too hot, exit 0).
    pos, vel, mass = cluster(n=20)
    path = tmp_path / "ics.hdf5"
    write_gadget(path, {1: (pos, vel, mass)})
    with pytest.warns(RuntimeWarning, match=r"ics\.hdf5 states no units, and mass_unit and length_unit \(1e10Msun, "
                                            r"1kpc\) make its values G = 1 units: its velocities are read in units "
                                            r"of 207\.4 km/s, right for a file in G = 1 units, but not for one "
                                            r"in km/s, as GADGET's customary units"):
        nbody.Simulation.load(path, backend="cpu", mass_unit="1e10Msun", length_unit="1kpc")


def test_a_cosmology_without_a_word_of_comoving_is_a_warning(tmp_path):
    # GADGET-2 and -3 name the cosmology in the header whatever the run and write no comoving flag: their z = 0 output
    # of a cosmological box (Time 1, the scale factor) loaded without a word. A file that says it was not comoving
    # (GADGET-4's ComovingIntegrationOn 0, SWIFT's Cosmological run 0) is none.
    pos, vel, mass = cluster(n=20)
    path = tmp_path / "box.hdf5"
    cosmology = {"Omega0": 0.3, "OmegaLambda": 0.7, "HubbleParam": 0.7}
    write_gadget(path, {1: (pos, vel, mass)}, time=1.0, header=cosmology)
    with pytest.warns(RuntimeWarning, match=r"box\.hdf5's header names a cosmology \(Omega0 = 0\.3, OmegaLambda = "
                                            r"0\.7, HubbleParam = 0\.7\) and does not say whether its run was "
                                            r"comoving: if it was, its positions are comoving"):
        nbody.Simulation.load(path, backend="cpu")
    with h5py.File(path, "a") as f:
        f.create_group("Parameters").attrs["ComovingIntegrationOn"] = np.int32(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbody.Simulation.load(path, backend="cpu")
        # A Time that is no scale factor at z = 0 (comoving, Redshift would be 1/Time - 1), and the same cosmology: a
        # run that was not comoving, said nothing of.
        for time in (2.5, 0.0):
            other = tmp_path / "other.hdf5"
            write_gadget(other, {1: (pos, vel, mass)}, time=time, header=cosmology)
            nbody.Simulation.load(other, backend="cpu")
    # Attributes that only feed the warning and are no numbers are passed over, not a reason to refuse the file.
    for odd in ("0.3", np.nan):
        write_gadget(path, {1: (pos, vel, mass)}, time=1.0, header={**cosmology, "Omega0": odd})
        with pytest.warns(RuntimeWarning, match=r"names a cosmology \(OmegaLambda = 0\.7, HubbleParam = 0\.7\)"):
            nbody.Simulation.load(path, backend="cpu")


def test_what_a_gas_holds_beside_gravity_is_said_not_kept(tmp_path):
    # Hydrodynamic fields were dropped unnamed (a tipsy file's are named).
    pos, vel, mass = cluster(n=20)
    path = tmp_path / "gas.hdf5"
    write_gadget(path, {0: (pos[:10], vel[:10], mass[:10]), 1: (pos[10:], vel[10:], mass[10:])})
    with h5py.File(path, "a") as f:
        for name in ("InternalEnergy", "Density", "SmoothingLength"):
            f["PartType0"][name] = np.ones(10, dtype=np.float32)
    sim = nbody.Simulation.load(path, backend="cpu")
    said = [n for n in sim.notices if "not kept" in n and "Density" in n]
    assert said and said[0].endswith("gas.hdf5's PartType0/Density, PartType0/InternalEnergy and "
                                     "PartType0/SmoothingLength are not kept (nbody integrates gravity alone: its "
                                     "outputs hold none of them)"), sim.notices


def test_a_particle_group_that_is_a_soft_link_is_named(tmp_path):
    # The header counts its bodies, so the file is in GADGET's layout: the group linked, not there itself, is what is
    # wrong (it read as a file "in neither nbody's nor GADGET's layout").
    pos, vel, mass = cluster(n=20)
    path = tmp_path / "soft.hdf5"
    write_gadget(path, {1: (pos, vel, mass)})
    with h5py.File(path, "a") as f:
        f.move("PartType1", "Data")
        f["PartType1"] = h5py.SoftLink("/Data")
    with pytest.raises(ValueError, match=r"soft\.hdf5: /PartType1 is a link to another object or file; nbody reads "
                                         r"only what the file holds itself"):
        nbody.Simulation.load(path, backend="cpu")


def test_masses_in_both_the_table_and_a_float32_dataset_that_agree_are_taken(tmp_path):
    pos, vel, _ = cluster(n=10)
    path = tmp_path / "ics.hdf5"
    write_gadget(path, {1: (pos, vel, np.full(10, 0.001))}, mass_table=[0, 0.001, 0, 0, 0, 0])  # float32 of 0.001
    np.testing.assert_array_equal(nbody.Simulation.load(path, backend="cpu").masses, np.float32(0.001))
