"""The runtime timeline of an eventlog: what each capability, thread and collection did over
time, built in one streaming pass (:mod:`.build`) into a typed model (:mod:`.model`).

Pipeline place: after ``formats/eventlog`` (it takes the reader's events), before
``analysis/eventlog_stats`` (figures) and ``render`` (the report page, Perfetto and Chrome-trace
exports).
"""
