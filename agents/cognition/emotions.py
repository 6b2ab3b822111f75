"""The AgentSociety seed's emotion vocabulary: the 21 OCC words an agent's dominant emotion
(`emotion_types`) is chosen from, and the six intensities (`emotion`, 0..10) each word feeds."""

from __future__ import annotations

# The seed's words, in its order.
OCC_WORDS = (
    "Joy",
    "Distress",
    "Resentment",
    "Pity",
    "Hope",
    "Fear",
    "Satisfaction",
    "Relief",
    "Disappointment",
    "Pride",
    "Admiration",
    "Shame",
    "Reproach",
    "Liking",
    "Disliking",
    "Gratitude",
    "Anger",
    "Gratification",
    "Remorse",
    "Love",
    "Hate",
)
# The seed's intensity keys.
INTENSITIES = ("sadness", "joy", "fear", "disgust", "anger", "surprise")

# Which intensity each word raises: pleasant words joy, the displeased ones sadness, the
# prospect-based fear and hope fear and surprise, the blaming ones anger, rejection disgust.
FAMILY: dict[str, str] = {
    **dict.fromkeys(
        ("joy", "satisfaction", "relief", "pride", "admiration", "liking", "gratitude"), "joy"
    ),
    **dict.fromkeys(("gratification", "love"), "joy"),
    **dict.fromkeys(("distress", "pity", "disappointment", "shame", "remorse"), "sadness"),
    "fear": "fear",
    "hope": "surprise",
    **dict.fromkeys(("anger", "resentment", "reproach", "hate"), "anger"),
    "disliking": "disgust",
}
# An intensity key given where a word is asked for: the word standing for it.
WORD_OF = {
    "joy": "Joy",
    "sadness": "Distress",
    "fear": "Fear",
    "anger": "Anger",
    "disgust": "Disliking",
    "surprise": "Hope",
}
# Valence of each word (-1 dark .. 1 bright): how open the feeling makes an agent.
VALENCE: dict[str, float] = {
    "joy": 1.0,
    "satisfaction": 0.8,
    "relief": 0.5,
    "pride": 0.7,
    "admiration": 0.7,
    "liking": 0.8,
    "gratitude": 0.9,
    "gratification": 0.8,
    "love": 1.0,
    "hope": 0.5,
    "distress": -0.7,
    "pity": -0.3,
    "disappointment": -0.5,
    "shame": -0.6,
    "remorse": -0.6,
    "fear": -0.8,
    "anger": -1.0,
    "resentment": -0.8,
    "reproach": -0.6,
    "hate": -1.0,
    "disliking": -0.6,
    "sadness": -0.7,
    "disgust": -0.8,
    "surprise": 0.5,
}


def occ_word(answer: str) -> str | None:
    """The seed's word for an answer: one of the 21 words in any case, or the word standing
    for an intensity key ('fear' -> 'Fear', 'sadness' -> 'Distress'); None for anything else."""
    key = answer.strip().lower()
    if key in FAMILY:
        return next(w for w in OCC_WORDS if w.lower() == key)
    return WORD_OF.get(key)


def family(word: str) -> str:
    """The intensity key a word feeds ('Distress' -> 'sadness'); the word itself otherwise."""
    key = word.strip().lower()
    return FAMILY.get(key, key)


def valence(word: str) -> float:
    """-1 .. 1: how bright the feeling is (0 for a word outside the vocabulary)."""
    return VALENCE.get(word.strip().lower(), 0.0)
