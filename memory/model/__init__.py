"""The memory's data model: records, requests, configs, the clock, associations."""
