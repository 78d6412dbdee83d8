"""Where `cmake --install` puts the Python package for PREFIX (argv[1]), relative to PREFIX:
the site directory of this interpreter's layout for that prefix, the one it searches when there
is one (Debian's python3: /usr -> lib/python3/dist-packages, /usr/local ->
lib/python3.X/dist-packages), else the plain CPython layout lib/python3.X/site-packages."""
import os
import sys
import sysconfig

prefix = os.path.normpath(os.path.abspath(sys.argv[1]))
searched = {os.path.normpath(p) for p in sys.path if p}
schemes = [s for s in ("deb_system", "posix_local", "posix_prefix")
           if s in sysconfig.get_scheme_names()]
# Debian's posix_local is "{base}/local/lib/...": /usr/local's site dir has base /usr.
for base in (prefix, os.path.dirname(prefix)):
    for scheme in schemes:
        d = os.path.normpath(sysconfig.get_path("platlib", scheme,
                                                vars={"base": base, "platbase": base}))
        if d.startswith(prefix + os.sep) and d in searched:
            print(os.path.relpath(d, prefix))
            sys.exit(0)
d = sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix})
print(os.path.relpath(d, prefix))
