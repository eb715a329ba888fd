"""One script from an ES module graph: each module becomes a function scope that returns its
exports, called once in the order the browser would evaluate them (imports first, depth first).

The static modules use a small subset of module syntax, and this handles exactly that subset:
`import { a, b as c } from "./x.js"`, `export function|async function|class|const …` and
`export { a, b as c }`. Anything else (default or namespace imports, `export let` whose live
binding a copy would break, bare specifiers, import cycles) raises BundleError, so a module that
steps outside the subset fails the build instead of shipping a bundle that behaves differently.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

IDENT = r"[A-Za-z_$][\w$]*"
IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*([\"'])([^\"']+)\2\s*;?[ \t]*$", re.M)
EXPORT_DECLARATION = re.compile(
    rf"^export\s+((?:async\s+)?function\s*\*?\s*|class\s+|const\s+)({IDENT})", re.M
)
EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}\s*;?[ \t]*$", re.M)
# Any other module statement at the top level (column 0): default/namespace/side-effect
# imports, `export let`, `export default`, re-exports, `import.meta`, `import(…)`.
OTHER_MODULE_SYNTAX = re.compile(r"^(?:import|export)\b.*$", re.M)


class BundleError(ValueError):
    """The module graph uses syntax the bundler does not translate."""


@dataclass(frozen=True)
class Module:
    path: str
    imports: list[tuple[str, list[tuple[str, str]]]]  # (module path, [(exported, local)])
    exports: list[tuple[str, str]]  # (exported, local)
    body: str


def _names(listing: str, path: str) -> list[tuple[str, str]]:
    """`a, b as c` → [("a", "a"), ("b", "c")]: (name on the exporting side, name on this side)."""
    names = []
    for item in filter(None, (part.strip() for part in listing.split(","))):
        match = re.fullmatch(rf"({IDENT})(?:\s+as\s+({IDENT}))?", item)
        if not match:
            raise BundleError(f"{path}: cannot read {item!r} in an import or export list")
        names.append((match[1], match[2] or match[1]))
    return names


def parse(path: str, source: str) -> Module:
    imports: list[tuple[str, list[tuple[str, str]]]] = []
    exports: list[tuple[str, str]] = []

    def take_import(match: re.Match) -> str:
        specifier = match[3]
        if not specifier.startswith(("./", "../")):
            raise BundleError(f"{path}: only relative imports are bundled, not {specifier!r}")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), specifier))
        imports.append((target, _names(match[1], path)))
        return "\n" * match[0].count("\n")  # keep line numbers of the module's own lines

    def take_declaration(match: re.Match) -> str:
        exports.append((match[2], match[2]))
        return match[1] + match[2]

    def take_list(match: re.Match) -> str:
        exports.extend((exported, local) for local, exported in _names(match[1], path))
        return "\n" * match[0].count("\n")

    body = IMPORT.sub(take_import, source)
    body = EXPORT_DECLARATION.sub(take_declaration, body)
    body = EXPORT_LIST.sub(take_list, body)
    leftover = OTHER_MODULE_SYNTAX.search(body)
    if leftover:
        raise BundleError(f"{path}: cannot bundle {leftover[0].strip()!r}")
    return Module(path=path, imports=imports, exports=exports, body=body)


def graph(entry: str, read: Callable[[str], str]) -> list[Module]:
    """The modules reachable from entry, in evaluation order (every module after its imports)."""
    ordered: list[Module] = []
    done: set[str] = set()

    def visit(path: str, trail: tuple[str, ...]) -> None:
        if path in trail:
            raise BundleError("import cycle: " + " → ".join((*trail[trail.index(path) :], path)))
        if path in done:
            return
        module = parse(path, read(path))
        for target, _ in module.imports:
            visit(target, (*trail, path))
        done.add(path)
        ordered.append(module)

    visit(entry, ())
    return ordered


def bundle(entry: str, read: Callable[[str], str]) -> str:
    """The script for entry (a static path such as "annotator/js/main.js"); read(path) returns a
    module's source. Names are checked: importing a name a module does not export fails here,
    as it would when the browser links the modules."""
    modules = graph(entry, read)
    variable = {module.path: f"$module{i}" for i, module in enumerate(modules)}
    exported = {module.path: {name for name, _ in module.exports} for module in modules}
    parts = [f"// {entry} and the {len(modules) - 1} modules it imports (config/jsbundle.py)\n"]
    for module in modules:
        bindings = []
        for target, names in module.imports:
            missing = [name for name, _ in names if name not in exported[target]]
            if missing:
                raise BundleError(f"{module.path}: {target} does not export {', '.join(missing)}")
            fields = ", ".join(
                name if name == local else f"{name}: {local}" for name, local in names
            )
            bindings.append(f"const {{ {fields} }} = {variable[target]};\n")
        returned = ", ".join(
            local if local == name else f"{name}: {local}" for name, local in module.exports
        )
        parts.append(
            f"// {module.path}\nconst {variable[module.path]} = (() => {{\n"
            f"{''.join(bindings)}{module.body.rstrip()}\nreturn {{ {returned} }};\n}})();\n"
        )
    return "".join(parts)
