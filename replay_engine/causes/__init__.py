"""Why a partition had no leader (or could not be written): the classifiers, the case as data, its sentence."""
