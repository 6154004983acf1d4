"""Words: text to index terms (the tokenizer, the stop lists) and a query to its terms and quoted
phrases."""
