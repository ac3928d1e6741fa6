"""The SLURM options of ``sweep``, ``figures`` and ``tables`` (``--backend slurm``) as the
command line names them ({flag: value}, ``runspec.slurm_flags``), or a ``slurm:`` mapping in
a sweep spec (a flag wins): checked, and built into ``sweep.slurm_options.SlurmOptions``."""
from __future__ import annotations

from ..errors import CollapseLabError
from ..runspec.slurm_flags import FLAGS, parse_extra

def given_slurm(given: dict, spec_section: dict | None = None, time_limit: str | None = None,
                where: str = "sweep spec"):
    """The SlurmOptions of this command: the spec's ``slurm:`` mapping, then the flags given."""
    from .slurm_options import SlurmOptions, check_options

    values, extra, from_spec = {}, (), {}
    if spec_section is not None:
        if not isinstance(spec_section, dict):
            raise CollapseLabError(f"{where}: slurm must be a mapping of SLURM options (partition, time, ...)")
        keys = {spec for _, spec, _ in FLAGS.values()} | {"options"}
        for k, v in spec_section.items():
            if k not in keys:
                raise CollapseLabError(f"{where}: slurm.{k} is not a SLURM option; the options: {', '.join(sorted(keys))}")
            if k == "options":
                if not isinstance(v, dict):
                    raise CollapseLabError(f"{where}: slurm.options must map sbatch options to values")
                extra = parse_extra([f"{a}={'' if b is True else b}" for a, b in v.items()], f"{where}: slurm.options")
                continue
            flag, (field, _, typ) = next((f, t) for f, t in FLAGS.items() if t[1] == k)
            try:
                values[field] = typ(v)
            except (TypeError, ValueError):
                raise CollapseLabError(f"{where}: slurm.{k} {v!r} is not a {typ.__name__}") from None
            from_spec[flag] = f"{where}: slurm.{k}"
    for flag, v in given.items():
        if flag == "--slurm-option":
            extra = extra + parse_extra(v)
        else:
            values[FLAGS[flag][0]] = v
            from_spec.pop(flag, None)  # a flag wins, and is named as given
    o = SlurmOptions(**values, extra=extra, train_limit=time_limit)
    try:
        check_options(o)
    except CollapseLabError as e:  # a value the spec gave is named as the spec's key, not as a flag not given
        msg = str(e)
        for flag, key in from_spec.items():
            msg = msg.replace(flag + " ", key + " ")
        raise CollapseLabError(msg) from None
    return o
