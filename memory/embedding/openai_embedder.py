"""Dense vectors from any OpenAI-compatible /v1/embeddings endpoint (GPU servers)."""

from __future__ import annotations

from collections.abc import Sequence

from societas.memory.embedding.base import TextVectors
from societas.memory.embedding.config import OpenAIEmbeddingConfig, key_from_env


class OpenAIEmbedder:
    """Batches texts into as few requests as `max_batch` allows; the key comes from env."""

    has_sparse = False

    def __init__(self, config: OpenAIEmbeddingConfig) -> None:
        import openai

        api_key = key_from_env("embedding.openai.api_key_env", config.api_key_env, "not-needed")
        self.name = f"openai:{config.model}"
        self.dense_size: int | None = config.dimensions
        self._config = config
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url, api_key=api_key, timeout=config.timeout_s, max_retries=3
        )

    async def embed_documents(self, texts: Sequence[str]) -> list[TextVectors]:
        out: list[TextVectors] = []
        step = self._config.max_batch
        for start in range(0, len(texts), step):
            chunk = list(texts[start : start + step])
            response = await self._client.embeddings.create(model=self._config.model, input=chunk)
            rows = sorted(response.data, key=lambda row: row.index)
            for row in rows:
                if len(row.embedding) != self.dense_size:
                    raise ValueError(
                        f"embedding endpoint returned {len(row.embedding)} dimensions, "
                        f"embedding.openai.dimensions is {self.dense_size}"
                    )
                out.append(TextVectors(dense=tuple(row.embedding)))
        return out

    async def embed_queries(self, texts: Sequence[str]) -> list[TextVectors]:
        return await self.embed_documents(texts)

    async def close(self) -> None:
        await self._client.close()
