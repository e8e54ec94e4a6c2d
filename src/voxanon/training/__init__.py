"""Training the models voxanon ships or trains per run: one trainer and a recipe per model."""
