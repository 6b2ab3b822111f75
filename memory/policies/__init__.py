"""Memory policies: forgetting layers, importance, temporal links, habits, contradictions."""
