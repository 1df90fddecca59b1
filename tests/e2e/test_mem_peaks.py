"""scripts/measure/mem_peaks.py reads h200-grpo.sh's memory polls: per run, the GPU's peak while
that run's judge service lived and the service's own peak; a run whose service never
showed up in the polls is left out."""
import importlib.util

from conftest import REPO


def test_peaks_per_run(tmp_path):
    (tmp_path / "mem.txt").write_text("10.0 1000\n10.5 90000\n11.0 2000\n20.0 120000\n20.5 3000\n")
    (tmp_path / "apps.txt").write_text("10.0 111, 612\n10.5 111, 40000\n10.5 222, 5000\n11.0 111, 700\n"
                                       "20.0 333, 80000\nnot a line\n")
    (tmp_path / "serve-off.log").write_text('msg="kgharness.zygote[9]: judge service started (pid 111)"\n')
    (tmp_path / "serve-on.log").write_text('msg="kgharness.zygote[9]: judge service started (pid 333)"\n')
    (tmp_path / "serve-x.log").write_text("no service here\n")
    (tmp_path / "serve-gone.log").write_text('judge service started (pid 444)\n')
    spec = importlib.util.spec_from_file_location("mem_peaks", REPO / "scripts" / "measure" / "mem_peaks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.peaks(tmp_path) == {"off": (90000, 40000), "on": (120000, 80000)}
