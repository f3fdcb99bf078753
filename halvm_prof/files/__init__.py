"""Files on the lowest floor: how outputs are written (:mod:`.output`), how inputs are opened
(:mod:`.input`), and a compressed input's bytes as they are read (:mod:`.compressed`)."""
