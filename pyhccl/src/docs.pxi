# Docstring text that several methods share, written once.
#
# A docstring line that holds only a slot, `{name}` or `{name: text}`, becomes
# the fragment `name` (given `text`), indented like the slot. _fill_docs() runs
# on a class once it is defined, so help(), pydoc and Sphinx autodoc show the
# whole text; an unknown name fails the import.

_DOC_FRAGMENTS = {
    # {collective} or {collective: root}: the rules of every collective
    "collective": lambda what: (
        "Collective: every rank calls it, in the same order"
        + (f", with the same {what}" if what else "") + ". Asynchronous: it "
        "enqueues the work on `stream` (None: the current stream) and returns; "
        "synchronise the stream before reading the result."),
    # {raises: HcclAllReduce}: a collective's errors
    "raises": lambda call: (
        "Raises:\n"
        "    TypeError, ValueError, BufferError: bad arguments (before any C call).\n"
        f"    HcclError: {call} refused the call."),
    "op": lambda _: 'op: ReduceOp, "sum"/"prod"/"max"/"min" or an mpi4py op.',
    "stream": lambda _: "stream: the Stream to enqueue on (keyword only).",
    "dtype": lambda _: "dtype: reinterpret both buffers as this DataType.",
}

_DOC_SLOT = re.compile(r"^( *)\{(\w+)(?::\s*([^}]*))?\}$", re.M)


def _doc_slot(m):
    indent, name, arg = m.group(1), m.group(2), m.group(3) or ""
    text = _DOC_FRAGMENTS[name](arg.strip())
    if "\n" in text:           # laid out already (Raises:)
        return "\n".join(indent + line for line in text.split("\n"))
    # continuation lines of an Args entry are indented once more
    return textwrap.fill(text, 72, initial_indent=indent,
                         subsequent_indent=indent + ("    " if indent else ""))


cdef int _fill_docs(type cls, str shown_as) except -1:
    """Fill the slots of the docstrings of `cls`'s methods; their embedded
    signatures name the class `shown_as` (a base names the public class)."""
    cdef str prefix = cls.__name__ + "."
    for name, member in vars(cls).items():
        doc = getattr(member, "__doc__", None)
        if name.startswith("_") or not callable(member) or not doc:
            continue            # (Cython's own helpers have read-only docstrings)
        if doc.startswith(prefix):
            doc = shown_as + "." + doc[len(prefix):]
        member.__doc__ = _DOC_SLOT.sub(_doc_slot, doc)
    return 0
