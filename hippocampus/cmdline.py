"""One rule for splitting a one-string command (ripple.command, model.lifecycle.start and server_args, the
--ripple-command flag): shell words (shlex) on POSIX; on Windows, Windows' own rule (the C runtime's, as
CommandLineToArgvW reads a command line): spaces and tabs part the words, double quotes group a word and are
removed, backslashes are kept as they are (C:\\Program Files\\x) except before a quote (2n then a quote: n and
the quote groups; 2n+1: n and a literal quote). It imports nothing of the hippocampus."""
from __future__ import annotations

import os
import shlex
from typing import Optional

WINDOWS = os.name == "nt"


def split(line: str, windows: Optional[bool] = None) -> list:
    """The words of a command line, the platform's way (windows: force one branch). ValueError: an unclosed quote."""
    if not (WINDOWS if windows is None else windows):
        return shlex.split(line)
    words, word, started, quoted, i = [], [], False, False, 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            n = len(line[i:]) - len(line[i:].lstrip("\\"))
            i += n
            if line[i:i + 1] == '"':
                word.append("\\" * (n // 2) + ('"' if n % 2 else ""))
                i += n % 2                  # an odd run escapes the quote; an even one leaves it to group
            else:
                word.append("\\" * n)
            started = True
        elif c == '"':
            if quoted and line[i + 1:i + 2] == '"':      # "" inside quotes: one literal quote
                word.append('"')
                i += 1
            else:
                quoted = not quoted
            started, i = True, i + 1
        elif c in " \t" and not quoted:
            if started:
                words.append("".join(word))
            word, started, i = [], False, i + 1
        else:
            word.append(c)
            started, i = True, i + 1
    if quoted:
        raise ValueError("No closing quotation")
    if started:
        words.append("".join(word))
    return words
