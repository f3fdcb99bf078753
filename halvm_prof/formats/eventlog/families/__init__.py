r"""The event types by family, each module a tuple of :class:`~halvm_prof.formats.eventlog.
event_types.Spec`\ s that :data:`halvm_prof.formats.eventlog.events.SPECS` joins."""
