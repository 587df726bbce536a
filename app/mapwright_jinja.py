#!/usr/bin/env python3
"""mapwright-jinja: renders Timeloop front-end templates (top.yaml.jinja2 and
the files it includes) for mapwright's Timeloop reader (engine/io/timeloop/
template.h), as a helper program: a JSON request on stdin, a JSON reply on
stdout.

Rendering is sandboxed (Jinja2's SandboxedEnvironment: a template cannot call
Python or reach attributes it should not) and the functions the front end's
templates use only read files:

  include(path, key)      the YAML at `key` (dotted) of another file
  include_all(glob, key)  the same for every file a glob matches, as one list
  include_text(path)      a file's text, rendered and pasted as it is
  path_exists(path)       whether the file exists
  cwd()                   the folder of the file being rendered
  add_to_path(folder)     one more folder relative paths are looked up in

Relative paths are looked up in the folder of the file being rendered, then in
the folders add_to_path gave. Parse data values come as text (NAME=VALUE)
and are given to the templates as the Python values the front end's users
pass (jinja_parse_data={"reg_enabled": False, "datawidth_jinja": 16}):
True/False, None, whole and decimal numbers as such, anything else (or a
value in quotes) as a string. As text, "False" would be true in an {% if %}
and "8" * 2 would be "88".

include and include_all do not parse YAML here: they leave a tagged node
(!mapwright-include {file, key}) that the C++ reader replaces, so YAML is read,
merged (<<, <<<) and reported on in one place. Every file they name is
rendered too (files may hold templates of their own), and returned.

Request: {"jobs": [{"file": PATH, "data": {NAME: VALUE, ...}} |
                   {"file": PATH, "variables": true}, ...]}
Reply:   {"jobs": [{"files": {PATH: TEXT, ...}, "top": PATH} |
                   {"variables": [NAME, ...]} | {"error": TEXT, "file": PATH}, ...]}
"""
import errno
import glob
import json
import os
import re
import stat
import sys

try:
    import resource
except ImportError:  # (not on every platform: then no cap)
    resource = None

try:
    import jinja2
    import jinja2.meta
    import jinja2.sandbox
except ImportError:  # reported as a reply, so the caller names the fix
    jinja2 = None

# A file pulled in more often than this is an include loop.
MAX_FILES = 10000
# Files read and text rendered are at most this large (include_text('/dev/zero')
# read until the system killed the helper), and the helper's memory is capped
# (the sandbox does not bound "a" * 4000000000).
MAX_TEXT_BYTES = 64 << 20
MAX_MEMORY_BYTES = 2 << 30


class TemplateError(Exception):
    def __init__(self, file, message):
        super().__init__(message)
        self.file = file
        self.message = message


def quoted(text):
    return json.dumps(text)


class Compiled:
    """Files read and compiled once per run of the helper: the jobs of one
    request (a batch of layers through one top file) share them."""

    def __init__(self):
        self.env = jinja2.sandbox.SandboxedEnvironment(
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        self.texts = {}
        self.templates = {}

    def text(self, path):
        if path not in self.texts:
            # (Opened without blocking: opening a FIFO for reading otherwise
            # waits for a writer, and the check below never runs.)
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                data = f.read(MAX_TEXT_BYTES + 1)
            if len(data) > MAX_TEXT_BYTES:
                raise OSError(errno.EFBIG, "larger than 64 MiB")
            self.texts[path] = data.decode("utf-8")
        return self.texts[path]

    def template(self, path):
        if path not in self.templates:
            self.templates[path] = self.env.from_string(self.text(path))
        return self.templates[path]


WHOLE = re.compile(r"[-+]?(0|[1-9][0-9]*)")
DECIMAL = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+)")
KEYWORDS = {"True": True, "true": True, "False": False, "false": False, "None": None,
            "none": None, "null": None}


def parse_value(text):
    """A parse-data value as the Python value it spells (see the top)."""
    if not isinstance(text, str):
        return text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in KEYWORDS:
        return KEYWORDS[text]
    if WHOLE.fullmatch(text):
        return int(text)
    if DECIMAL.fullmatch(text):
        return float(text)
    return text


class Renderer:
    def __init__(self, data, compiled):
        self.data = {name: parse_value(value) for name, value in data.items()}
        self.search = []
        self.files = {}  # path -> rendered text
        self.compiled = compiled

    def resolve(self, path, here):
        path = str(path)
        if os.path.isabs(path):
            return os.path.normpath(path)
        for folder in [here] + self.search:
            candidate = os.path.normpath(os.path.join(folder, path))
            if os.path.exists(candidate):
                return candidate
        return os.path.normpath(os.path.join(here, path))

    def read(self, path, by):
        try:
            return self.compiled.text(path)
        except OSError as e:
            raise TemplateError(by, "cannot read '%s' (%s)" % (path, e.strerror or e))
        except UnicodeDecodeError:
            raise TemplateError(by, "'%s' is not UTF-8 text" % path)

    def render(self, path, by=None):
        """Renders `path` once (into self.files) and returns its text."""
        if path in self.files:
            return self.files[path] or ""
        if len(self.files) >= MAX_FILES:
            raise TemplateError(by or path, "more than %d files included; expected no "
                                "include loop" % MAX_FILES)
        self.files[path] = None  # a file that includes itself is read once
        self.read(path, by or path)
        here = os.path.dirname(path)

        def include(target, key=""):
            resolved = self.resolve(target, here)
            self.render(resolved, path)
            return "!mapwright-include {file: %s, key: %s}" % (quoted(resolved), quoted(key))

        def include_all(pattern, key=""):
            pattern = str(pattern)
            if not os.path.isabs(pattern):
                pattern = os.path.join(here, pattern)
            matches = sorted(glob.glob(pattern))
            for m in matches:
                self.render(os.path.normpath(m), path)
            return "!mapwright-include-all {files: %s, key: %s}" % (
                json.dumps([os.path.normpath(m) for m in matches]), quoted(key))

        def include_text(target):
            # Rendered, then pasted as it is (the exercises' layer files paste
            # problem_base.yaml to define the anchor their <<< merges).
            return self.render(self.resolve(target, here), path)

        def path_exists(target):
            return os.path.exists(self.resolve(target, here))

        def cwd():
            return here

        def add_to_path(folder):
            folder = self.resolve(folder, here)
            if folder not in self.search:
                self.search.append(folder)
            return ""

        functions = {"include": include, "include_all": include_all,
                     "include_text": include_text, "path_exists": path_exists, "cwd": cwd,
                     "add_to_path": add_to_path}
        try:
            template = self.compiled.template(path)
            rendered = template.render(**dict(self.data, **functions))
        except TemplateError:
            raise
        except jinja2.TemplateSyntaxError as e:
            raise TemplateError("%s:%d" % (path, e.lineno), "template syntax: %s" % e.message)
        except jinja2.UndefinedError as e:
            raise TemplateError(path, "%s; expected it in the parse data (--set NAME=VALUE)"
                                % e.message)
        except jinja2.exceptions.SecurityError as e:
            raise TemplateError(path, "refused by the sandbox: %s" % e)
        except MemoryError:
            raise TemplateError(path, "rendering needs more than 2 GiB of memory; expected a "
                                "smaller template")
        except Exception as e:  # anything the template's own logic raises
            raise TemplateError(path, "template error: %s" % (str(e) or type(e).__name__))
        if len(rendered) > MAX_TEXT_BYTES:
            raise TemplateError(path, "renders to more than 64 MiB of text; expected a smaller "
                                "template")
        self.files[path] = rendered
        return rendered


FUNCTIONS = {"include", "include_all", "include_text", "path_exists", "cwd", "add_to_path"}


def variables_of(job, compiled):
    """The variables the top file needs from its parse data (those it uses
    and does not set itself), for a form that asks for them."""
    top = os.path.abspath(str(job["file"]))
    try:
        names = jinja2.meta.find_undeclared_variables(compiled.env.parse(compiled.text(top)))
    except OSError as e:
        return {"error": "cannot read '%s' (%s)" % (top, e.strerror or e), "file": top}
    except jinja2.TemplateSyntaxError as e:
        return {"error": "template syntax: %s" % e.message, "file": "%s:%d" % (top, e.lineno)}
    return {"variables": sorted(n for n in names if n not in FUNCTIONS)}


def run_job(job, compiled):
    if job.get("variables"):
        return variables_of(job, compiled)
    top = os.path.abspath(str(job["file"]))
    renderer = Renderer(job.get("data") or {}, compiled)
    try:
        renderer.render(top)
    except TemplateError as e:
        return {"error": e.message, "file": e.file}
    except RecursionError:
        return {"error": "includes nest too deeply; expected no include loop", "file": top}
    return {"top": top, "files": {k: v for k, v in renderer.files.items() if v is not None}}


def main():
    if resource is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > MAX_MEMORY_BYTES:
            resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY_BYTES, hard))
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    if jinja2 is None:
        reply = {"jobs": [{"error": "Jinja2 is not installed (Debian: python3-jinja2)",
                           "file": str(j.get("file", ""))} for j in request["jobs"]]}
    else:
        compiled = Compiled()
        reply = {"jobs": [run_job(j, compiled) for j in request["jobs"]]}
    sys.stdout.buffer.write(json.dumps(reply).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
