"""The three write calls (plant, graft, tend), init, and the transaction they share."""
