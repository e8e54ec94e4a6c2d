"""The "Listen to the Features" content-embedding anonymizer (issue 15): generator, FVQ, speaker branch, loss."""
