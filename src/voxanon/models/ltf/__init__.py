"""The "Listen to the Features" content-embedding anonymizer: generator, FVQ, speaker branch, loss."""
