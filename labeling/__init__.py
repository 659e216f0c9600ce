"""The human side of Stepmark: problems, solutions, ratings, the queue, quality, import/export."""
