"""Stop lists: words too common to tell documents apart.

`LUCENE` is Lucene's classic English stop set (33 words), what Lucene and Elasticsearch drop by
default. `ENGLISH` is the Snowball English list (the one Snowball's stemmer ships with), minus the
words that carry meaning in technical text (`not`, `no`, `only`, `same`, `all`, `any`, ...).
"""

from __future__ import annotations

LUCENE: frozenset[str] = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such "
    "that the their then there these they this to was will with".split()
)

ENGLISH: frozenset[str] = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing would should could ought i'm you're he's she's it's we're they're i've you've we've
    they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't
    aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't
    shouldn't can't cannot couldn't mustn't let's that's who's what's here's there's when's
    where's why's how's a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how both each few more
    most other some such nor own so than too very s t can will just don now
    """.split()
)
