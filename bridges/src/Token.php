<?php

namespace RedisLock\Bridge;

/**
 * A hold's token, as a Symfony key keeps it in its state.
 *
 * It serialises as the token alone, so a key can travel to another process (a
 * Messenger job), which then puts off or releases the hold. Serialising it hands
 * the hold on: a fatal error in this process no longer releases it.
 *
 * @internal
 */
final class Token
{
    public function __construct(
        public readonly string $value,
        private ?string $hold = null,
    ) {
    }

    public function __serialize(): array
    {
        if ($this->hold !== null) {
            Holds::forget($this->hold);
            $this->hold = null;
        }
        return ['token' => $this->value];
    }

    public function __unserialize(array $data): void
    {
        if (!\is_string($data['token'] ?? null)) {
            throw new \UnexpectedValueException('A redis_lock token must be a string.');
        }
        $this->value = $data['token'];
    }
}
