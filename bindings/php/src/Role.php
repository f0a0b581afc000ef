<?php

declare(strict_types=1);

namespace Toolgate;

/** Who the user is. No user counts as not admin (fail closed). */
enum Role: string
{
    case Admin = 'admin';
    case User = 'user';
    case None = 'none';

    public function code(): int
    {
        return match ($this) {
            self::None => Native::ROLE_NONE,
            self::User => Native::ROLE_USER,
            self::Admin => Native::ROLE_ADMIN,
        };
    }
}
