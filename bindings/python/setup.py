"""The package's build step: the built notebook page (../../dist/notebook/playground.html, written by
`npm run build`) and the core (../../bindings/, ../../build/wasm/) copied into
attention_playground/bundle/ of the wheel, so a pip-installed package finds them without the
repository (attention_playground.bundle_dir, core_dir)."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

REPO = Path(__file__).resolve().parent.parent.parent
FILES = {'playground.html': REPO / 'dist' / 'notebook' / 'playground.html'}
FILES.update({f: REPO / f for f in ('bindings/cli.mjs', 'bindings/attention.mjs', 'build/wasm/attention.js', 'build/wasm/attention.wasm')})


class BuildWithBundle(build_py):
    def run(self):
        super().run()
        missing = [str(p) for p in FILES.values() if not p.is_file()]
        if missing:
            raise SystemExit(f'attention-playground: {", ".join(missing)} missing: '
                             'run `npm run build` in the repository first (it builds the notebook page and the core)')
        target = Path(self.build_lib) / 'attention_playground' / 'bundle'
        for f, source in FILES.items():
            (target / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / f)


setup(cmdclass={'build_py': BuildWithBundle})
