"""hyper 0.7, which gobiko.apns uses, imports the collection ABCs from `collections`, where
Python 3.10 removed them; they are put back under their old names before it loads."""
import collections
import collections.abc

for name in ("Iterable", "Mapping", "MutableMapping", "MutableSet", "Sequence", "Callable"):
    if not hasattr(collections, name):
        setattr(collections, name, getattr(collections.abc, name))
