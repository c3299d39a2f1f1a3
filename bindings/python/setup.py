"""The package's build step: the built notebook page and the core (../../dist/notebook/, written by
`npm run build`) copied into attention_playground/bundle/ of the wheel, so a pip-installed package
finds them without the repository (attention_playground.bundle_dir)."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

FILES = ('playground.html', 'bindings/cli.mjs', 'bindings/attention.mjs', 'build/wasm/attention.js', 'build/wasm/attention.wasm')


class BuildWithBundle(build_py):
    def run(self):
        super().run()
        source = Path(__file__).resolve().parent.parent.parent / 'dist' / 'notebook'
        missing = [f for f in FILES if not (source / f).is_file()]
        if missing:
            raise SystemExit(f'attention-playground: {source} lacks {", ".join(missing)}: '
                             'run `npm run build` in the repository first (it builds the notebook page and the core)')
        target = Path(self.build_lib) / 'attention_playground' / 'bundle'
        for f in FILES:
            (target / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / f, target / f)


setup(cmdclass={'build_py': BuildWithBundle})
