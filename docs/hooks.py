"""MkDocs hooks: the reference pages' generated parts, from the command line and the declarations
themselves (a page says ``<!-- generated: NAME -->`` where one goes), so they cannot drift from
what scorelake does."""

from __future__ import annotations

import re

import click
import typer


def _commands() -> str:
    """Every command, in ``--help``'s order: what it does, its usage and each option."""
    from scorelake.cli import app
    from scorelake.cli._app import reflowed

    group = typer.main.get_command(app)
    context = click.Context(group, info_name="scorelake")
    parts = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        usage = " ".join(command.collect_usage_pieces(click.Context(command, info_name=name)))
        lines = reflowed(command.help or "").splitlines()
        said = "\n".join(line for line in lines if not line.startswith("Example: "))
        examples = "\n".join(line.removeprefix("Example: ") for line in lines if line.startswith("Example: "))
        parts.append(f"## `scorelake {name}`\n\n{said}\n\n```text\nscorelake {name} {usage}\n```\n\n"
                     + (f"For example:\n\n```bash\n{examples}\n```\n\n" if examples else "")
                     + "| option | what it takes |\n|---|---|")
        for param in command.params:
            if param.param_type_name == "argument":
                names = f"`{param.human_readable_name}`"
                text = getattr(param, "help", None) or ""
            else:
                names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                text = param.help or ""
                if not param.is_flag and param.default not in (None, (), []) and param.show_default is not False:
                    text += f" [default: {getattr(param.default, 'value', param.default)}]"
            if hasattr(param.type, "choices"):
                text += f" (one of: {', '.join(map(str, param.type.choices))})"
            parts[-1] += f"\n| {names} | {_cell(text)} |"
    return "\n\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _views() -> str:
    """Every view, layer by layer: its name, what its file's opening comment says, the views it reads."""
    from scorelake.storage._views import SQL_LAYERS, sql_files, view_dependencies

    parts = []
    for layer in SQL_LAYERS:
        parts.append(f"## {layer.capitalize()} views\n\n| view | what it holds | reads |\n|---|---|---|")
        for name, text in sql_files(layer):
            comment = " ".join(line.strip()[2:].strip() for line in text.strip().splitlines()
                               if line.startswith("--") and not re.match(r"--\s*depends on:", line))
            reads = ", ".join(f"`{v}`" for v in view_dependencies(text)) or "tables only"
            parts[-1] += f"\n| `{name}` | {_cell(comment)} | {reads} |"
    return "\n\n".join(parts)


def _tables() -> str:
    """Every table of the warehouse with its columns and their types (``transforms/columns.py``)."""
    from scorelake.transforms.columns import SCHEMAS

    return "\n\n".join(f"### `{table}`\n\n" + ", ".join(f"`{column}` {dtype}" for column, dtype in schema.items())
                       for table, schema in SCHEMAS.items())


GENERATED = {"commands": _commands, "views": _views, "tables": _tables}


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001  (MkDocs' hook signature)
    return re.sub(r"<!-- generated: (\w+) -->", lambda m: GENERATED[m[1]](), markdown)
