"""Writing an op table in the layout `ffnroof fit --data` reads (docs/formats.md, "Op tables"):
its `# name: value` lines, the column header and the rows, gzip-compressed with no timestamp so
that the same rows give the same bytes."""
import gzip


def write(path, head, columns, rows):
    """head: the `# name: value` lines; columns: the header's names; rows: lists of cells."""
    lines = list(head) + ["\t".join(columns)] + ["\t".join(str(c) for c in r) for r in rows]
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write(("\n".join(lines) + "\n").encode())
    print(f"{path}: {len(rows)} rows")
