"""The Ray-free simulation runtime: group engines and the messages between them."""
