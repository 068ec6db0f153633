"""Documents that arrive as files rather than text: PDF input, its conversion to the
text the pipeline reads, and the map from that text back to pages and word boxes.

`input` is the producer's cheap check (base64, size, the %PDF- magic) and imports no
PDF library; `pdf` converts (pypdfium2, in a child process with a time limit), `ocr`
reads scanned pages (Tesseract, the optional `vetq[ocr]` extra), `layout` turns
positioned words into lines that keep columns, `pages` holds the converted document,
and `provenance` maps a span of the joined text to its page and word boxes.
"""
