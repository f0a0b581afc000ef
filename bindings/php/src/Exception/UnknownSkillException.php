<?php

declare(strict_types=1);

namespace Toolgate\Exception;

/** A skill named at run start is not in the table. */
final class UnknownSkillException extends ToolgateException
{
}
