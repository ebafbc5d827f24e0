"""The build's own compile commands (compile_commands.json), reused by checks
that compile or preprocess a file exactly as the build would."""
import shlex


def command_without_outputs(entry):
    """`entry`'s compiler and flags, its source still in, without what makes it
    write: -c, -o FILE and the dependency-file flags."""
    out, skip = [], False
    for a in entry.get("arguments") or shlex.split(entry["command"]):
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-o"):
            continue
        out.append(a)
    return out
