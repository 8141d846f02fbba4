<?php
// What the application loads from /usr/share/php, the Debian way (each package's own
// autoload.php), and the Debian package each file comes from. autoload.php requires
// them; the test reads this list to skip, naming the packages, where one is missing.
return [
    'required' => [
        'Symfony/Bundle/FrameworkBundle/autoload.php' => 'php-symfony-framework-bundle',
        'Symfony/Component/Console/autoload.php' => 'php-symfony-console',
        'Symfony/Component/Lock/autoload.php' => 'php-symfony-lock',
        'Symfony/Component/Semaphore/autoload.php' => 'php-symfony-semaphore',
        'Symfony/Component/Messenger/autoload.php' => 'php-symfony-messenger',
        'Symfony/Component/Messenger/Bridge/Doctrine/autoload.php' => 'php-symfony-doctrine-messenger',
        'Doctrine/DBAL/autoload.php' => 'php-doctrine-dbal',
        'Doctrine/Persistence/autoload.php' => 'php-doctrine-persistence',
        // FrameworkBundle 6.4 and 7.4 ask Composer\InstalledVersions which packages are there
        // (ContainerBuilder::willBeAvailable() throws without it); Debian's php-symfony-*
        // packages have no Composer, but the composer package ships this class, which,
        // loaded from there, knows of no package and lets class_exists() decide.
        'Composer/InstalledVersions.php' => 'composer',
    ],
    // Symfony 6.3 and later only (Debian 13 on).
    'optional' => [
        'Symfony/Component/Scheduler/autoload.php' => 'php-symfony-scheduler',
        // The web profiler, for the "profile" environment (the Locks panel's test).
        'Symfony/Bundle/WebProfilerBundle/autoload.php' => 'php-symfony-web-profiler-bundle',
    ],
];
