"""The demo photographs' references and simulated system captions in German (plain data)."""

from __future__ import annotations

from evaluation.demo.captions.base import PhotoCaptions, photo

GERMAN: dict[str, PhotoCaptions] = {
    "skimage-astronaut": photo(
        (
            "Eine Astronautin in orangefarbenem Raumanzug lächelt in die Kamera, hinter ihr die amerikanische Flagge.",
            "Porträt einer Frau mit kurzen Haaren im orangen Anzug, daneben ein Helm und ein Modell des Space Shuttles.",
        ),
        (
            "A",
            "Eine lächelnde Astronautin im orangefarbenen Raumanzug vor der amerikanischen Flagge, neben ihr ein schwarzer Helm.",
        ),
        ("B", "Eine Astronautin in einem orangen Anzug."),
        ("C", "Eine Person in einem Raum."),
        (
            "D",
            "Ein lächelnder Astronaut im weißen Raumanzug vor der amerikanischen Flagge, mit einem Helm in der Hand.",
        ),
    ),
    "skimage-camera": photo(
        (
            "Schwarzweißfoto eines Mannes, der auf einer Wiese durch eine Kamera auf einem Stativ schaut.",
            "Ein Fotograf im dunklen Mantel steht mit seiner Kamera auf einer Rasenfläche, im Hintergrund Gebäude.",
        ),
        (
            "A",
            "Ein Mann im dunklen Mantel blickt auf einer Wiese durch eine Kamera auf einem Stativ, schwarzweiß.",
        ),
        ("B", "Ein Mann mit einer Kamera."),
        ("C", "Ein Foto von draußen."),
        ("D", "Eine Frau im hellen Mantel fotografiert mit einer Kamera auf einem Stativ einen Strand."),
    ),
    "skimage-chelsea": photo(
        (
            "Nahaufnahme einer getigerten Katze mit grünen Augen und weißen Schnurrhaaren.",
            "Das Gesicht einer braun getigerten Katze, die aufmerksam zur Seite schaut.",
        ),
        (
            "A",
            "Nahaufnahme einer getigerten Katze mit grünen Augen, rosa Nase und langen weißen Schnurrhaaren.",
        ),
        ("B", "Eine getigerte Katze."),
        ("C", "Ein Tier."),
        ("D", "Eine schwarze Katze mit blauen Augen liegt auf einem Sofa."),
    ),
    "skimage-clock": photo(
        (
            "Eine verwackelte Schwarzweißaufnahme einer runden Wanduhr.",
            "Eine weiße Uhr an einer Wand, durch Bewegung unscharf.",
        ),
        (
            "A",
            "Eine runde weiße Wanduhr an einer grauen Wand, durch die Bewegung der Kamera seitlich verwischt.",
        ),
        ("B", "Eine unscharfe Uhr."),
        ("C", "Ein verschwommenes Bild."),
        ("D", "Eine scharfe Aufnahme einer eckigen Uhr auf einem Tisch."),
    ),
    "skimage-coffee": photo(
        (
            "Eine rote Espressotasse mit Untertasse und Löffel auf einem Holztisch.",
            "Ein Espresso in einer roten Tasse, daneben ein kleiner Löffel.",
        ),
        (
            "A",
            "Ein Espresso in einer roten Tasse auf einer roten Untertasse mit einem silbernen Löffel, auf einem Holztisch.",
        ),
        ("B", "Eine Tasse Kaffee."),
        ("C", "Etwas auf einem Tisch."),
        ("D", "Ein Glas Tee mit Zitrone auf einem roten Tisch."),
    ),
    "skimage-coins": photo(
        (
            "Antike Münzen, in Reihen auf grauem Grund angeordnet, schwarzweiß.",
            "Viele alte Münzen mit Köpfen im Profil, in einem Raster ausgelegt.",
        ),
        (
            "A",
            "Schwarzweißfoto antiker Münzen in mehreren Reihen auf grauem Hintergrund, viele mit einem Kopf im Profil.",
        ),
        ("B", "Alte Münzen."),
        ("C", "Einige runde Gegenstände."),
        ("D", "Goldene moderne Euromünzen, in einem Haufen auf einem Tisch."),
    ),
    "skimage-rocket": photo(
        (
            "Eine weiße Rakete auf der Startrampe in der Abenddämmerung.",
            "Eine Falcon-9-Rakete zwischen Stahltürmen, unten helle Scheinwerfer.",
        ),
        (
            "A",
            "Eine weiße Falcon-9-Rakete steht in der Dämmerung auf der Startrampe zwischen hohen Stahltürmen.",
        ),
        ("B", "Eine Rakete auf der Startrampe."),
        ("C", "Ein hohes Gebäude am Abend."),
        ("D", "Eine Rakete hebt am Mittag mit einer großen Rauchwolke ab."),
    ),
    "skimage-motorcycle": photo(
        (
            "Ein rotes Motorrad steht in einer Garage vor Regalen mit Kartons.",
            "Eine rote Yamaha mit schwarzem Sitz, im Hintergrund Metallregale und eine Holzbank.",
        ),
        (
            "A",
            "Ein rotes Yamaha-Motorrad mit schwarzem Sitz steht in einer Garage vor Regalen voller Kartons.",
        ),
        ("B", "Ein rotes Motorrad."),
        ("C", "Ein Fahrzeug in einem Raum."),
        ("D", "Ein blaues Motorrad fährt auf einer Landstraße."),
    ),
    "skimage-hubble-deep-field": photo(
        (
            "Unzählige ferne Galaxien in verschiedenen Farben vor dem schwarzen Weltraum.",
            "Eine Aufnahme des tiefen Weltraums mit vielen kleinen Galaxien, Spiralen und Flecken.",
        ),
        ("A", "Tausende ferne Galaxien in Weiß, Orange und Blau, verstreut über den schwarzen Weltraum."),
        ("B", "Viele Galaxien im Weltraum."),
        ("C", "Ein dunkles Bild mit Punkten."),
        ("E", "Ein Nachthimmel über einer Stadt mit dem Vollmond."),
    ),
    "skimage-retina": photo(
        (
            "Eine Aufnahme des Augenhintergrunds mit roten Blutgefäßen in einem schwarzen Kreis.",
            "Die orangefarbene Netzhaut eines Auges mit hellem Sehnervkopf und verzweigten Adern.",
        ),
        (
            "A",
            "Ein Foto des Augenhintergrunds: orangerote Netzhaut mit verzweigten Blutgefäßen und hellem Sehnervkopf in einem schwarzen Kreis.",
        ),
        ("B", "Eine Netzhaut."),
        ("C", "Ein roter Kreis."),
        ("D", "Ein Foto des Planeten Mars mit Flüssen, in einem schwarzen Kreis."),
    ),
    "skimage-moon": photo(
        (
            "Die graue Oberfläche des Mondes mit vielen Kratern, schwarzweiß.",
            "Nahaufnahme der Mondoberfläche mit kleinen Kratern und dunklen Flecken.",
        ),
        (
            "A",
            "Schwarzweiße Nahaufnahme der Mondoberfläche mit vielen kleinen Kratern und einigen dunklen Flecken.",
        ),
        ("B", "Die Oberfläche des Mondes."),
        ("C", "Eine graue Fläche."),
        ("D", "Die rote Oberfläche des Mars mit großen Bergen."),
    ),
    "skimage-brick": photo(
        (
            "Eine Ziegelmauer in Schwarzweiß, schräg fotografiert.",
            "Lange, schmale Backsteine in versetzten Reihen.",
        ),
        ("A", "Schräg fotografierte Mauer aus langen, schmalen Ziegeln in versetzten Reihen, schwarzweiß."),
        ("B", "Eine Ziegelmauer."),
        ("C", "Eine Wand."),
        ("D", "Eine bunte Mauer aus runden Steinen mit einem Fenster."),
    ),
    "skimage-grass": photo(
        (
            "Nahaufnahme von Gras mit dünnen Halmen, schwarzweiß.",
            "Ein Stück Rasen mit feinen Grashalmen und ein paar Kleeblättern.",
        ),
        ("A", "Schwarzweiße Nahaufnahme von Rasen mit dünnen Halmen und einigen kleinen Kleeblättern."),
        ("B", "Gras."),
        ("C", "Pflanzen."),
        ("D", "Ein grünes Weizenfeld unter blauem Himmel."),
    ),
    "skimage-gravel": photo(
        (
            "Kies von oben fotografiert, schwarzweiß.",
            "Viele kantige kleine Steine dicht beieinander.",
        ),
        ("A", "Schwarzweiße Aufnahme von scharfkantigem Kies, von oben gesehen."),
        ("B", "Kies."),
        ("C", "Viele kleine Dinge."),
        ("D", "Runde bunte Kieselsteine in einem Bach."),
    ),
    "skimage-ihc": photo(
        (
            "Mikroskopbild von Gewebe mit braun gefärbten Drüsen und blauen Zellkernen.",
            "Ein gefärbter Gewebeschnitt unter dem Mikroskop, braun und blau.",
        ),
        (
            "A",
            "Mikroskopaufnahme von gefärbtem Darmgewebe: braun gefärbte Drüsen, umgeben von hellem Gewebe mit blauen Zellkernen.",
        ),
        ("B", "Gewebe unter dem Mikroskop."),
        ("C", "Ein braunes und blaues Muster."),
        ("E", "Eine Satellitenaufnahme von Feldern und Flüssen."),
    ),
    "skimage-text": photo(
        (
            "Handgeschriebene mathematische Formeln auf liniertem Papier, schräg fotografiert.",
            "Eine Schwarzweißaufnahme eines Blatts mit handschriftlichen Gleichungen.",
        ),
        ("A", "Schräge Schwarzweißaufnahme handgeschriebener mathematischer Formeln auf liniertem Papier."),
        ("B", "Handgeschriebene Formeln."),
        ("C", "Ein Blatt Papier."),
        ("D", "Eine gedruckte Seite eines Romans mit Bildern."),
    ),
    "skimage-page": photo(
        (
            "Eine gedruckte Seite mit der Überschrift „Region-based segmentation“ und einer Zeile Code.",
            "Foto eines ungleichmäßig beleuchteten Dokuments mit Text und Python-Code.",
        ),
        (
            "A",
            "Foto einer gedruckten Seite mit der Überschrift „Region-based segmentation“, einem Absatz Text und einer Zeile Python-Code.",
        ),
        ("B", "Eine gedruckte Seite."),
        ("C", "Ein Dokument."),
        ("E", "Eine handgeschriebene Einkaufsliste auf einem Zettel."),
    ),
}
